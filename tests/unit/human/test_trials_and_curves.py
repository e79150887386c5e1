"""Human trial data: the two readers, per-condition accuracy, human curves, human sources and the
``human:`` config section, against direct counts and known answers."""

from __future__ import annotations

import csv
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.paths import SHARED_DATA
from scipy.stats import spearmanr

from vcrbench.config import validate_config
from vcrbench.errors import VcrbenchError
from vcrbench.human.curves import human_curves, human_properties, human_tables
from vcrbench.human.transfer import (
    PAPER_CLASSES,
    human_assignments,
    source_name,
    transfer_targets,
)
from vcrbench.human.trials import (
    TRIALS_SCHEMA,
    condition_accuracy,
    correct,
    experiment_name,
    read_human,
    read_model_vs_human,
    read_trials,
)

MVH = SHARED_DATA / "human" / "model-vs-human"
EXPERIMENTS = ("uniform-noise", "low-pass")
HEADER = "subj,Session,trial,rt,object_response,category,condition,imagename"


def _experiment(name: str) -> Path:
    folder = MVH / name
    if not folder.is_dir() or not list(folder.glob("*_subject-*.csv")):
        pytest.skip(f"{folder} is absent (the human reference data lives in ../shared/data)")
    return folder


def _direct_counts(folder: Path) -> dict[float, tuple[int, int, int]]:
    """condition -> (trials, correct, no answer), counted from the raw CSVs."""
    counts: dict[float, list[int]] = defaultdict(lambda: [0, 0, 0])
    for file in sorted(folder.glob("*_subject-*.csv")):
        with file.open(newline="") as handle:
            for row in csv.DictReader(handle):
                entry = counts[float(row["condition"])]
                answer = row["object_response"].strip()
                entry[0] += 1
                entry[1] += answer == row["category"].strip()
                entry[2] += answer == "na"
    return {level: tuple(c) for level, c in counts.items()}


# --- model-vs-human reader on the real data -------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_condition_accuracy_equals_a_direct_count(name):
    folder = _experiment(name)
    expected = _direct_counts(folder)
    table = condition_accuracy(read_model_vs_human(folder)).to_pylist()
    assert [r["condition"] for r in table] == sorted(expected)
    for row in table:
        n, k, na = expected[row["condition"]]
        assert (row["n_trials"], row["n_correct"], row["n_no_answer"]) == (n, k, na)
        assert row["accuracy"] == pytest.approx(k / n, abs=1e-12)
    assert sum(r["n_trials"] for r in table) == 4 * 1280
    assert sum(r["n_no_answer"] for r in table) > 0  # the "na" answers are there and wrong


@pytest.mark.shared
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_real_trials_have_the_normalised_schema(name):
    folder = _experiment(name)
    trials = read_model_vs_human(folder)
    assert trials.schema == TRIALS_SCHEMA
    assert experiment_name(folder) == name
    assert trials.column("dv").null_count == trials.num_rows  # Δv comes from the stimuli
    assert trials.column("order").to_pylist() == list(range(trials.num_rows))
    assert set(trials.column("subject").to_pylist()) == {f"subject-0{k}" for k in range(1, 5)}
    na = trials.column("response").null_count
    assert na == sum(v[2] for v in _direct_counts(folder).values())


@pytest.mark.shared
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_human_accuracy_falls_with_the_corruption_strength(name):
    table = condition_accuracy(read_model_vs_human(_experiment(name)))
    level = table.column("condition").to_numpy()
    accuracy = table.column("accuracy").to_numpy()
    assert level.size == 8
    rho = spearmanr(level, accuracy).statistic
    assert rho <= -0.9, (level, accuracy)
    assert accuracy[np.argmin(level)] - accuracy[np.argmax(level)] > 0.5


# --- malformed model-vs-human files ----------------------------------------------------------


ROW = "subject-01,1,{t},0.8,{answer},{category},{condition},img{t}.png"


def _write(folder: Path, name: str, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / name
    file.write_text("".join(line + "\n" for line in lines))
    return file


def _good_rows(n: int = 3) -> list[str]:
    return [ROW.format(t=t, answer="cat", category="cat", condition="0.1") for t in range(n)]


def test_a_small_file_reads_as_written(tmp_path):
    lines = [
        HEADER,
        ROW.format(t=1, answer="cat", category="cat", condition="0.0"),
        ROW.format(t=2, answer="na", category="dog", condition="0.5"),
        ROW.format(t=3, answer="dog", category="cat", condition="0.5"),
    ]
    _write(tmp_path, "x_subject-01_session_1.csv", lines)
    trials = read_model_vs_human(tmp_path)
    assert trials.column("response").to_pylist() == ["cat", None, "dog"]
    assert trials.column("label").to_pylist() == ["cat", "dog", "cat"]
    assert trials.column("condition").to_pylist() == [0.0, 0.5, 0.5]
    assert correct(trials).tolist() == [True, False, False]
    rows = condition_accuracy(trials).to_pylist()
    assert [(r["condition"], r["n_trials"], r["n_correct"], r["n_no_answer"]) for r in rows] == [
        (0.0, 1, 1, 0),
        (0.5, 2, 0, 1),
    ]


@pytest.mark.parametrize(
    ("lines", "line"),
    [
        # a missing column (no "condition")
        (["subj,Session,trial,rt,object_response,category,imagename",
          "subject-01,1,1,0.8,cat,cat,img.png"], 1),
        # an unknown category (row 3 of the file)
        ([HEADER, *_good_rows(1), ROW.format(t=9, answer="cat", category="zebra",
                                             condition="0.1")], 3),
        # an unknown answer
        ([HEADER, ROW.format(t=9, answer="tiger", category="cat", condition="0.1")], 2),
        # a non-numeric condition (row 4)
        ([HEADER, *_good_rows(2), ROW.format(t=9, answer="cat", category="cat",
                                             condition="high")], 4),
        # a row with too few fields (row 3)
        ([HEADER, *_good_rows(1), "subject-01,1,2,0.8,cat,cat"], 3),
        # header only: the file is empty of trials; the first trial would be line 2
        ([HEADER], None),
        # zero bytes
        ([], 1),
    ],
    ids=["missing-column", "unknown-category", "unknown-answer", "non-numeric-condition",
         "too-few-fields", "header-only", "zero-bytes"],
)
def test_malformed_files_name_the_file_and_the_line(tmp_path, lines, line):
    name = "uniform-noise_subject-01_session_1.csv"
    if lines:
        file = _write(tmp_path, name, lines)
    else:
        file = tmp_path / name
        file.write_bytes(b"")
    with pytest.raises(VcrbenchError) as error:
        read_model_vs_human(tmp_path)
    message = str(error.value)
    assert str(file) in message, message
    if line is None:
        assert re.search(r"line \d+", message), f"no line in: {message}"
    else:
        assert f"line {line}:" in message, message


def test_two_experiments_in_one_folder_are_rejected(tmp_path):
    _write(tmp_path, "uniform-noise_subject-01_session_1.csv", [HEADER, *_good_rows()])
    _write(tmp_path, "low-pass_subject-01_session_1.csv", [HEADER, *_good_rows()])
    with pytest.raises(VcrbenchError, match="low-pass.*uniform-noise"):
        read_model_vs_human(tmp_path)
    with pytest.raises(VcrbenchError, match="one experiment"):
        experiment_name(tmp_path)


def test_missing_path_and_unknown_format_are_errors(tmp_path):
    with pytest.raises(VcrbenchError, match="neither a file nor a folder"):
        read_model_vs_human(tmp_path / "absent")
    with pytest.raises(VcrbenchError, match="no .csv"):
        read_model_vs_human(tmp_path)
    with pytest.raises(VcrbenchError, match="unknown format 'xls'"):
        read_human("xls", tmp_path)


# --- the generic trials format ---------------------------------------------------------------


TRIALS_ROWS = [
    # subject, image_id, dv, response, label, clean_response
    ("s1", "a", 0.1, "cat", "cat", "cat"),
    ("s1", "b", 0.5, "dog", "cat", "cat"),
    ("s2", "a", 0.9, "", "cat", "dog"),
    ("s2", "c", 0.0, "car", "car", "car"),
    ("s2", "d", 1.0, "boat", "car", ""),
]


def _trials_csv(path: Path, rows=TRIALS_ROWS, clean: bool = True) -> Path:
    header = "subject,image_id,dv,response,label" + (",clean_response" if clean else "")
    lines = [header]
    for row in rows:
        values = [str(v) for v in (row if clean else row[:5])]
        lines.append(",".join(values))
    path.write_text("\n".join(lines) + "\n")
    return path


def _trials_parquet(path: Path, rows=TRIALS_ROWS) -> Path:
    names = ["subject", "image_id", "dv", "response", "label", "clean_response"]
    columns = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    columns["response"] = [v or None for v in columns["response"]]
    columns["clean_response"] = [v or None for v in columns["clean_response"]]
    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_trials_format_reads_csv_and_parquet(tmp_path, kind):
    if kind == "csv":
        file = _trials_csv(tmp_path / "t.csv")
    else:
        file = _trials_parquet(tmp_path / "t.parquet")
    trials = read_human("trials", file)
    assert trials.schema == TRIALS_SCHEMA
    assert trials.column("subject").to_pylist() == [r[0] for r in TRIALS_ROWS]
    assert trials.column("image_id").to_pylist() == [r[1] for r in TRIALS_ROWS]
    assert trials.column("dv").to_pylist() == [r[2] for r in TRIALS_ROWS]
    assert trials.column("response").to_pylist() == ["cat", "dog", None, "car", "boat"]
    assert trials.column("label").to_pylist() == [r[4] for r in TRIALS_ROWS]
    assert trials.column("clean_response").to_pylist() == ["cat", "cat", "dog", "car", None]
    assert trials.column("condition").null_count == 5
    assert correct(trials).tolist() == [True, False, False, True, False]


def test_trials_folder_mixes_csv_and_parquet_in_name_order(tmp_path):
    _trials_csv(tmp_path / "a.csv", TRIALS_ROWS[:2])
    _trials_parquet(tmp_path / "b.parquet", TRIALS_ROWS[2:])
    trials = read_trials(tmp_path)
    assert trials.column("image_id").to_pylist() == ["a", "b", "a", "c", "d"]
    assert trials.column("order").to_pylist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("dv", ["1.5", "-0.01", "nan", "x"])
def test_trials_dv_outside_the_unit_interval_names_the_line(tmp_path, dv):
    rows = [*TRIALS_ROWS[:2], ("s3", "e", dv, "cat", "cat", "cat")]
    file = _trials_csv(tmp_path / "t.csv", rows)
    with pytest.raises(VcrbenchError) as error:
        read_trials(file)
    message = str(error.value)
    assert str(file) in message and "line 4:" in message and "dv" in message, message


def test_trials_bad_label_and_missing_column(tmp_path):
    file = _trials_csv(tmp_path / "t.csv", [*TRIALS_ROWS[:1], ("s", "e", 0.2, "cat", "lion", "")])
    with pytest.raises(VcrbenchError, match=r"line 3: label 'lion'"):
        read_trials(file)
    pq.write_table(pa.table({"subject": ["s"], "dv": [0.1]}), tmp_path / "p.parquet")
    with pytest.raises(VcrbenchError, match="missing column.*image_id"):
        read_trials(tmp_path / "p.parquet")


def test_human_properties_with_clean_answers(tmp_path):
    rows = [*TRIALS_ROWS[:4], ("s2", "d", 1.0, "boat", "car", "boat")]
    trials = read_trials(_trials_csv(tmp_path / "t.csv", rows))
    props = human_properties(trials, min_count=20)
    assert set(props) == {"accuracy", "consistency"}
    # clean answer vs label: cat=cat, cat=cat, dog≠cat, car=car, boat≠car -> 3 of 5
    assert props["accuracy"].anchor_outcomes.tolist() == [1, 1, 0, 1, 0]
    assert props["accuracy"].ok.tolist() == [True, False, False, True, False]
    # consistency is not pinned at 1: no Δv = 0 trials here, so s(0) is free
    assert props["consistency"].anchor_outcomes is None
    # response vs clean answer: cat=cat, dog≠cat, none≠dog, car=car, boat=boat
    assert props["consistency"].ok.tolist() == [True, False, False, True, True]


def test_a_clean_no_answer_counts_as_wrong_and_keeps_consistency(tmp_path):
    # The last subject gave no answer on the clean image (an empty clean_response: "an empty
    # response is no answer"). That is wrong for the anchor and never consistent; it must not
    # drop the consistency curve of the whole data set.
    trials = read_trials(_trials_csv(tmp_path / "t.csv"))
    assert trials.column("clean_response").to_pylist()[-1] is None
    props = human_properties(trials, min_count=20)
    assert set(props) == {"accuracy", "consistency"}
    assert np.mean(props["accuracy"].anchor_outcomes) == pytest.approx(3 / 5)
    assert props["consistency"].ok.tolist() == [True, False, False, True, False]


def test_human_properties_without_clean_answers(tmp_path):
    trials = read_trials(_trials_csv(tmp_path / "t.csv", clean=False))
    props = human_properties(trials, min_count=20)
    assert set(props) == {"accuracy"} and props["accuracy"].anchor_outcomes is None
    # trials shown at Δv = 0 exactly measure s(0) once there are L of them; never a condition
    # at Δv > 0 (the uniform-noise experiment's weakest condition is at Δv ≈ 0.38)
    dv = pa.array([0.0, 0.0, 0.6, 0.7, 0.0], pa.float64())
    at_zero = trials.set_column(trials.schema.get_field_index("dv"), "dv", dv)
    measured = human_properties(at_zero, min_count=3)["accuracy"]
    assert np.nanmean(measured.anchor_outcomes) == pytest.approx(1 / 3)  # cat=cat, dog, none
    assert np.isnan(measured.anchor_outcomes[2:4]).all()
    assert human_properties(at_zero, min_count=4)["accuracy"].anchor_outcomes is None
    without_dv = trials.set_column(trials.schema.get_field_index("dv"), "dv",
                                   pa.nulls(5, pa.float64()))
    with pytest.raises(VcrbenchError, match="Δv"):
        human_properties(without_dv, min_count=20)


# --- human curves on simulated trials --------------------------------------------------------


def _truth(v):
    return 0.05 + 0.9 / (1.0 + np.exp((np.asarray(v) - 0.45) / 0.08))


def _truth_integral() -> float:
    # ∫_0^1 1 / (1 + e^{(v − c)/w}) dv = [v − w ln(1 + e^{(v − c)/w})]_0^1
    c, w = 0.45, 0.08
    logistic = 1.0 - w * (math.log1p(math.exp((1 - c) / w)) - math.log1p(math.exp(-c / w)))
    return 0.05 + 0.9 * logistic


def _simulated_trials(n: int = 20000, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0.0, 1.0, n)
    right = rng.uniform(0.0, 1.0, n) < _truth(dv)
    return pa.Table.from_pylist(
        [
            {"subject": "sim", "image_id": f"i{i}", "condition": None, "dv": float(dv[i]),
             "response": "cat" if right[i] else "dog", "label": "cat", "clean_response": None,
             "order": i}
            for i in range(n)
        ],
        schema=TRIALS_SCHEMA,
    )


def test_human_curve_recovers_a_known_logistic_curve():
    rates, curves, replicates, metrics = human_curves(
        _simulated_trials(), corruption="gaussian_blur", source="sim", bins=40, min_count=20,
        n_boot=20, seed=0,
    )
    assert set(curves.column("metric").to_pylist()) == {"accuracy"}
    assert set(curves.column("classes").to_pylist()) == {16}
    v = curves.column("v").to_numpy()
    s = curves.column("s").to_numpy()
    assert np.all(np.diff(s) <= 1e-9), "the curve is not monotone non-increasing"
    middle = (v >= 0.1) & (v <= 0.9)
    error = np.abs(s[middle] - _truth(v[middle]))
    assert error.max() < 0.05, (v[middle][np.argmax(error)], error.max())
    row = metrics.to_pylist()[0]
    assert row["R"] == pytest.approx(_truth_integral(), abs=0.02)
    assert row["R_lo"] <= row["R"] <= row["R_hi"]
    assert row["n_samples"] == 20000 and row["model"] == "sim" and row["classes"] == 16
    assert replicates.num_rows == 20
    assert sum(rates.column("count").to_pylist()) == 20000


def test_human_tables_on_the_trials_format(tmp_path):
    file = tmp_path / "t.csv"
    with file.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["subject", "image_id", "dv", "response", "label"])
        for r in _simulated_trials(2000, seed=5).to_pylist():
            writer.writerow([r["subject"], r["image_id"], repr(r["dv"]), r["response"],
                             r["label"]])
    tables = human_tables("trials", str(file), None, corruption="c", source="mine", bins=10,
                          min_count=20, n_boot=5, seed=1)
    assert tables["conditions"].num_rows == 0
    assert tables["metrics"].column("n_samples").to_pylist() == [2000]
    assert tables["metrics"].column("metric").to_pylist() == ["accuracy"]


def test_human_tables_on_model_vs_human_trials(tmp_path):
    # 4 conditions x 60 trials; condition k is answered right in 60 - 15 k of them.
    lines = [HEADER]
    for k, level in enumerate([0.0, 0.1, 0.3, 0.9]):
        for t in range(60):
            answer = "cat" if t < 60 - 15 * k else ("na" if t % 2 else "dog")
            lines.append(ROW.format(t=t, answer=answer, category="cat", condition=level))
    folder = tmp_path / "mvh"
    _write(folder, "uniform-noise_subject-01_session_1.csv", lines)
    dvs = {0.0: [0.30, 0.34, 0.36], 0.1: [0.6, 0.7, 0.75], 0.3: [0.85, 0.9, 0.88],
           0.9: [0.95, 0.97, 0.96]}
    stimuli = pa.table({
        "condition": [c for c, v in dvs.items() for _ in v],
        "image_id": [f"im{i}" for v in dvs.values() for i in range(len(v))],
        "dv": [x for v in dvs.values() for x in v],
    })
    with pytest.raises(VcrbenchError, match="stimuli"):
        human_tables("model-vs-human", str(folder), None, corruption="uniform_noise",
                     source="s", bins=10, min_count=5, n_boot=5, seed=1)
    tables = human_tables("model-vs-human", str(folder), stimuli, corruption="uniform_noise",
                          source="s", bins=10, min_count=5, n_boot=5, seed=1)
    conditions = tables["conditions"].to_pylist()
    assert [r["condition"] for r in conditions] == [0.0, 0.1, 0.3, 0.9]
    for k, row in enumerate(conditions):
        values = dvs[row["condition"]]
        assert row["n_trials"] == 60 and row["n_correct"] == 60 - 15 * k
        assert row["n_no_answer"] == sum(t % 2 for t in range(60 - 15 * k, 60))
        assert row["dv_median"] == pytest.approx(np.median(values))
        assert row["dv_q25"] == pytest.approx(np.quantile(values, 0.25))
        assert row["dv_q75"] == pytest.approx(np.quantile(values, 0.75))
    metrics = tables["metrics"].to_pylist()
    assert [m["metric"] for m in metrics] == ["accuracy"]
    assert metrics[0]["n_samples"] == 240
    # no trial at Δv = 0 (condition 0 is at Δv 0.30–0.36): s(0) is free and the supported
    # range starts at the first bin with data, where HMRI / MRSI will start too
    assert metrics[0]["anchor"] is None
    assert metrics[0]["dv_min"] == pytest.approx(0.3) and metrics[0]["dv_max"] == 1.0


# --- which human curve each corruption uses --------------------------------------------------


def _entry(corruption, transfer_to=None, source=None, path="data/uniform-noise"):
    return {"format": "model-vs-human", "path": path, "corruption": corruption,
            "transfer_to": transfer_to, "source": source}


def test_transfer_targets_default_to_the_paper_class_members_in_the_run():
    run = ["uniform_noise", "gaussian_noise", "gaussian_blur", "brightness", "shot_noise"]
    assert transfer_targets(_entry("uniform_noise"), run) == ["gaussian_noise", "shot_noise"]
    assert transfer_targets(_entry("gaussian_blur"), run) == []  # no other blur in the run
    assert transfer_targets(_entry("brightness"), run) == []  # no class
    assert transfer_targets(_entry("uniform_noise", ["brightness", "uniform_noise"]), run) == [
        "brightness"]
    assert transfer_targets(_entry("uniform_noise", []), run) == []
    assert set(PAPER_CLASSES["noise"]) == {"shot_noise", "impulse_noise", "gaussian_noise",
                                           "uniform_noise"}


def test_human_assignments_prefer_own_data_then_config_order():
    run = ["gaussian_noise", "uniform_noise", "gaussian_blur", "median_blur", "brightness"]
    human = [
        _entry("uniform_noise"),
        _entry("gaussian_blur", path="x/low-pass", source="Geirhos 2018"),
        _entry("gaussian_noise", transfer_to=["brightness"], path="x/g"),
        _entry("brightness", transfer_to=["median_blur"], path="x/b"),
    ]
    assigned = human_assignments(human, run)
    assert assigned == {
        "gaussian_noise": ("gaussian_noise", "model-vs-human/g"),
        "uniform_noise": ("uniform_noise", "model-vs-human/uniform-noise"),
        "gaussian_blur": ("gaussian_blur", "Geirhos 2018"),
        "median_blur": ("gaussian_blur", "Geirhos 2018 via gaussian_blur"),
        "brightness": ("brightness", "model-vs-human/b"),
    }
    assert source_name(_entry("x", source="mine")) == "mine"


# --- the human: section of the config --------------------------------------------------------


@pytest.mark.parametrize(
    ("human", "message"),
    [
        ([{"corruption": "gaussian_blur"}], "human[0].corruption 'gaussian_blur'"),
        ([{}, {"transfer_to": ["gaussian_blur"], "path": "{tmp}/b",
               "corruption": "gaussian_noise"}],
         "human[1].transfer_to: 'gaussian_blur'"),
        ([{"path": "{tmp}/absent"}], "human[0].path"),
        ([{}, {"path": "{tmp}/b"}], "human[1]: corruption 'uniform_noise' already has human"),
        ([{"format": "csv"}], "'human[0].format' is 'csv'"),
        ([{"path": 3}], "'human[0].path' must be of type string"),
        ([{"colour": 1}], "unknown key 'colour' under 'human[0]'"),
    ],
    ids=["corruption-not-in-run", "transfer-not-in-run", "missing-path", "two-data-sets",
         "unknown-format", "path-type", "unknown-key"],
)
def test_bad_human_config_names_the_key(tmp_path, human, message):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    entries = []
    for override in human:
        entry = {"format": "model-vs-human", "path": str(tmp_path / "a"),
                 "corruption": "uniform_noise"}
        entry.update(override)
        if isinstance(entry["path"], str):
            entry["path"] = entry["path"].replace("{tmp}", str(tmp_path))
        entries.append(entry)
    config = {"corruptions": ["uniform_noise", "gaussian_noise"], "human": entries}
    with pytest.raises(VcrbenchError) as error:
        validate_config(config)
    assert message in str(error.value), str(error.value)


def test_good_human_config_fills_defaults(tmp_path):
    config = validate_config({
        "corruptions": ["uniform_noise", "gaussian_noise"],
        "human": [{"format": "trials", "path": str(tmp_path), "corruption": "uniform_noise"}],
    })
    entry = config["human"][0]
    assert entry["transfer_to"] is None and entry["source"] is None
    assert entry["stimulus_images"] == 50
    assert validate_config({})["human"] == []


def test_trials_table_with_a_corruption_column_gives_each_data_set_its_rows(tmp_path):
    from vcrbench.human.trials import read_trials

    path = tmp_path / "all.csv"
    path.write_text(
        "subject,image_id,corruption,dv,response,label\n"
        "s1,a,gaussian_noise,0.1,cat,cat\n"
        "s1,b,gaussian_blur,0.2,dog,cat\n"
        "s2,c,gaussian_noise,0.3,,dog\n",
        encoding="utf-8",
    )
    noise = read_trials(path, "gaussian_noise")
    assert noise.column("image_id").to_pylist() == ["a", "c"]
    assert noise.column("order").to_pylist() == [0, 1]
    assert read_trials(path, "gaussian_blur").column("dv").to_pylist() == [0.2]
    assert read_trials(path).num_rows == 3  # no corruption given: every row
    with pytest.raises(VcrbenchError, match="no trials of corruption 'frost'.*gaussian_blur"):
        read_trials(path, "frost")
