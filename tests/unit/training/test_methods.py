"""Training methods (AugMix, REVa⁻, REVa): AugMix views from keyed draws, checked against the
paper's mixing and torchvision's operations; the Jensen–Shannon, AugMix and Eq. 2 losses
against direct formulas and scipy; PGD counterparts on a real model; a resumed REVa epoch; the
method settings' config checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pytest
import torch
from helpers.paths import REPO
from scipy.spatial.distance import jensenshannon
from torchvision.transforms import AugMix, InterpolationMode
from torchvision.transforms.autoaugment import _apply_op

from vcrbench.config import validate_config
from vcrbench.data.datasets import build_index
from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model
from vcrbench.models.finetuned import read_checkpoint
from vcrbench.training.adversarial import (
    counterpart_table,
    counterparts_of_index,
    craft_counterparts,
    shard_rows,
)
from vcrbench.training.augmix import (
    AUGMIX_OPS,
    GEOMETRIC_OPS,
    AugMixDraw,
    CorruptionOp,
    Step,
    apply_augmix_op,
    augmix_view,
    draw_augmix,
    mixing_weights,
)
from vcrbench.training.checkpoint import save_checkpoint
from vcrbench.training.loop import train_epoch
from vcrbench.training.losses import AugMixLoss, RevaLoss, jensen_shannon
from vcrbench.training.methods import augmix_pool, method_parts, targeted_from_groups
from vcrbench.training.spec import AugMixSettings, PgdSettings, RevaSettings, TrainingSpec
from vcrbench.training.views import ADVERSARIAL, AUGMIX_VIEWS, INPUT

CPU = torch.device("cpu")
SPEC = TrainingSpec(
    name="tiny-reva", base="efficientnet-lite0", corruption=None, fraction=0.0,
    spacing="linear", epochs=2, batch_size=4, trainable="last:2", batchnorm="frozen", lr=0.01,
    momentum=0.9, weight_decay=0.0, nesterov=False, schedule="constant", step_size=2,
    gamma=0.1, seed=5, method="reva",
    reva=RevaSettings(targeted=("gaussian_noise",), severity=3),
)


def _images(n: int, size: int = 32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


# ----------------------------------------------------------------------------- AugMix draws


def test_mixing_weights_sum_to_one_and_width_and_depth_are_respected():
    rng = np.random.default_rng(0)
    depths = set()
    for width in (1, 3, 5):
        for _ in range(50):
            draw = draw_augmix(rng, AUGMIX_OPS, AugMixSettings(width=width))
            weights = mixing_weights(draw)
            assert weights.shape == (width + 1,) and (weights >= 0).all()
            assert weights.sum() == pytest.approx(1.0, abs=1e-12)
            assert len(draw.chains) == width
            depths |= {len(chain) for chain in draw.chains}
            assert all(0.1 <= s.level <= 3 and s.op in AUGMIX_OPS for c in draw.chains for s in c)
    assert depths == {1, 2, 3}  # U{1, 2, 3}
    fixed = draw_augmix(rng, AUGMIX_OPS, AugMixSettings(width=4, depth=2))
    assert [len(chain) for chain in fixed.chains] == [2, 2, 2, 2]


def test_mix_with_beta_1_1_and_dirichlet_1_1_1_has_the_expected_moments():
    """m ~ Beta(1, 1) = U(0, 1) and w ~ Dirichlet(1, 1, 1): means 1/2 and 1/3 each."""
    rng = np.random.default_rng(1)
    draws = [draw_augmix(rng, AUGMIX_OPS, AugMixSettings()) for _ in range(2000)]
    mixes = np.array([d.mix for d in draws])
    weights = np.stack([d.weights for d in draws])
    assert mixes.mean() == pytest.approx(0.5, abs=0.02)
    assert mixes.var() == pytest.approx(1 / 12, abs=0.01)
    assert weights.mean(0) == pytest.approx([1 / 3] * 3, abs=0.02)


def test_the_view_is_the_weighted_sum_of_the_clean_image_and_the_chains():
    image = torch.from_numpy(_images(1)[0]).permute(2, 0, 1)
    draw = draw_augmix(np.random.default_rng(3), AUGMIX_OPS, AugMixSettings())
    expected = mixing_weights(draw)[0] * image.double()
    for weight, chain in zip(mixing_weights(draw)[1:], draw.chains, strict=True):
        chained = image
        for step in chain:
            chained = apply_augmix_op(chained, step)
        expected += weight * chained.double()
    assert torch.equal(augmix_view(image, draw), expected.round().to(torch.uint8))


def test_torchvision_augmix_mixes_as_the_paper_and_truncates():
    """torchvision's AugMix with fixed Dirichlet draws and an op space of autocontrast alone
    (idempotent, so any depth gives the same chain): m·x + (1 − m)·Σ w_i chain_i as in the
    paper (its Beta weight is the first of a Dirichlet(α, α) pair), truncated to uint8 where we
    round; with all_ops=False its operations are AugMix's nine."""
    image = torch.from_numpy(_images(1, seed=4)[0]).permute(2, 0, 1).contiguous()
    m, w = 0.37, [0.21, 0.5, 0.29]

    class Fixed(AugMix):
        def _sample_dirichlet(self, params):
            return torch.tensor([[m, 1 - m]] if params.shape[-1] == 2 else [w])

        def _augmentation_space(self, num_bins, image_size):
            return {"AutoContrast": (torch.tensor(0.0), False)}

    theirs = Fixed(mixture_width=3)(image)
    draw = AugMixDraw(m, np.array(w), tuple((Step("autocontrast", 1.0, 1, 0),)
                                            for _ in range(3)))
    ours = augmix_view(image, draw)
    chains = apply_augmix_op(image, Step("autocontrast", 1.0, 1, 0)).double()
    paper = m * image.double() + (1 - m) * sum(w) * chains
    # torchvision: the same sum in float32, in its order, truncated to uint8
    weights = torch.tensor([m, 1 - m]), torch.tensor(w) * (1 - m)
    float32 = weights[0][0] * image
    for i in range(3):
        float32 = float32 + weights[1][i] * chains.float()
    assert (float32.double() - paper).abs().max() < 1e-4
    assert torch.equal(theirs, float32.to(torch.uint8))
    assert torch.equal(ours, paper.round().to(torch.uint8))
    assert (theirs.int() - ours.int()).abs().max() == 1  # truncation against rounding
    nine = AugMix(all_ops=False)._augmentation_space(10, (32, 32))
    names = {"AutoContrast": "autocontrast", "Equalize": "equalize", "Posterize": "posterize",
             "Rotate": "rotate", "Solarize": "solarize", "ShearX": "shear_x",
             "ShearY": "shear_y", "TranslateX": "translate_x", "TranslateY": "translate_y"}
    assert sorted(names[n] for n in nine) == sorted(AUGMIX_OPS)


@pytest.mark.parametrize(
    ("op", "level", "sign", "theirs", "magnitude"),
    [
        ("rotate", 5.0, -1, "Rotate", -15.0),
        ("shear_x", 10 / 3, 1, "ShearX", 0.1),
        ("shear_y", 10 / 3, -1, "ShearY", -0.1),
        ("translate_x", 3.0, 1, "TranslateX", 3.0),  # int(3 · (32/3) / 10) = 3 px
        ("translate_y", 3.0, -1, "TranslateY", -3.0),
        ("posterize", 2.6, 1, "Posterize", 3),  # 4 − int(2.6 · 4 / 10) = 3 bits
        ("solarize", 2.0, 1, "Solarize", 205),  # 256 − int(2 · 256 / 10) = 205
        ("autocontrast", 1.0, 1, "AutoContrast", 0.0),
        ("equalize", 1.0, 1, "Equalize", 0.0),
    ],
)
def test_each_operation_is_torchvisions_at_augmix_strength(op, level, sign, theirs, magnitude):
    image = torch.from_numpy(_images(1, seed=6)[0]).permute(2, 0, 1).contiguous()
    ours = apply_augmix_op(image, Step(op, level, sign, 0))
    reference = _apply_op(image, theirs, magnitude, interpolation=InterpolationMode.BILINEAR,
                          fill=None)  # zero padding: black, as our fill 0
    assert torch.equal(ours, reference)


def test_a_constant_image_stays_constant_under_the_colour_free_operations():
    """Geometric operations filling with the constant, autocontrast and equalize leave a
    constant image unchanged; posterize and solarize change its value."""
    constant = torch.full((3, 32, 32), 97, dtype=torch.uint8)
    rng = np.random.default_rng(7)
    pool = (*GEOMETRIC_OPS, "autocontrast", "equalize")
    for _ in range(8):
        draw = draw_augmix(rng, pool, AugMixSettings(severity=10))  # strongest
        assert torch.equal(augmix_view(constant, draw, fill=97), constant)
    assert not torch.equal(apply_augmix_op(constant, Step("posterize", 10, 1, 0)), constant)
    assert not torch.equal(apply_augmix_op(constant, Step("solarize", 9, 1, 0)), constant)
    # with AugMix's black fill a rotation uncovers black corners
    assert apply_augmix_op(constant, Step("rotate", 10, 1, 0), fill=0).min() == 0
    # torchvision's own bilinear fill darkens the border of a constant image (coverage a
    # counted twice: a² x + (1 − a) fill, down to 0.75 x at a = 1/2)
    theirs = _apply_op(constant, "Rotate", 30.0, interpolation=InterpolationMode.BILINEAR,
                       fill=[97.0] * 3)
    assert theirs.min() == 73


def test_a_targeted_corruption_is_applied_at_its_imagenet_c_severity_or_domain_fraction():
    op = CorruptionOp.at("gaussian_noise", severity=3)
    assert dict(op.params) == {"sigma": 0.18}
    assert dict(CorruptionOp.at("contrast", domain_fraction=0.25).params) == {"contrast": 0.75}
    # a domain fraction wins over the severity (reva.severity is ignored when it is set)
    assert dict(CorruptionOp.at("contrast", 3, 0.25).params) == {"contrast": 0.75}
    with pytest.raises(VcrbenchError, match="no ImageNet-C severities"):
        CorruptionOp.at("noc_rain", severity=2)
    image = torch.full((3, 32, 32), 128, dtype=torch.uint8)
    noisy = op(image, Step("gaussian_noise", 1.0, 1, 11))
    assert torch.equal(noisy, op(image, Step("gaussian_noise", 1.0, 1, 11)))
    assert not torch.equal(noisy, op(image, Step("gaussian_noise", 1.0, 1, 12)))
    assert (noisy.double() - 128).std() / 255 == pytest.approx(0.18, rel=0.1)
    pool, corruptions = augmix_pool(SPEC)
    assert pool == (*AUGMIX_OPS, "gaussian_noise") and set(corruptions) == {"gaussian_noise"}
    only = dataclasses.replace(SPEC, reva=dataclasses.replace(SPEC.reva, augmix_ops=False))
    assert augmix_pool(only)[0] == ("gaussian_noise",)
    assert augmix_pool(dataclasses.replace(SPEC, method="reva_minus"))[0] == AUGMIX_OPS


def test_views_are_keyed_by_position_same_after_a_batch_split():
    images = _images(6)
    adversarial = _images(10, seed=9)
    augmentation, _ = method_parts(SPEC, adversarial)
    whole = augmentation(images.copy(), 2, range(4, 10), CPU)
    first = augmentation(images[:2].copy(), 2, range(4, 6), CPU)
    rest = augmentation(images[2:].copy(), 2, range(6, 10), CPU)
    assert sorted(whole.images) == sorted([INPUT, ADVERSARIAL, *AUGMIX_VIEWS])
    for name in whole.images:
        assert np.array_equal(whole.images[name],
                              np.concatenate([first.images[name], rest.images[name]]))
    assert np.array_equal(whole.images[INPUT], images)
    assert not np.array_equal(whole.images["augmix1"], whole.images["augmix2"])
    other_epoch = augmentation(images.copy(), 3, range(4, 10), CPU)
    assert not np.array_equal(whole.images["augmix1"], other_epoch.images["augmix1"])
    # the adversarial view is the counterpart of the image at that place of the epoch's order
    from vcrbench.training.spec import epoch_order

    order = epoch_order(10, SPEC, 2)
    assert np.array_equal(whole.images[ADVERSARIAL], adversarial[order[4:10]])
    assert not whole.corrupted.any()


# ----------------------------------------------------------------------------- losses


def test_jensen_shannon_equals_the_direct_formula_and_scipy_and_is_zero_for_equal_inputs():
    p = np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    q = np.array([[0.9, 0.1, 0.0], [0.3, 0.3, 0.4]])
    r = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    mixture = np.clip((p + q + r) / 3, 1e-7, 1)

    def kl(a, b):
        return np.array([sum(x * np.log(x / y) for x, y in zip(ra, rb, strict=True) if x > 0)
                         for ra, rb in zip(a, b, strict=True)])

    direct = (kl(p, mixture) + kl(q, mixture) + kl(r, mixture)) / 3
    ours = jensen_shannon([torch.tensor(a) for a in (p, q, r)]).numpy()
    np.testing.assert_allclose(ours, direct, rtol=1e-12)
    two = jensen_shannon([torch.tensor(p), torch.tensor(q)]).numpy()
    np.testing.assert_allclose(two, jensenshannon(p, q, axis=1) ** 2, rtol=1e-10)
    same = jensen_shannon([torch.tensor(p)] * 3)
    assert same.abs().max() < 1e-15  # 0 up to the round-off of the mean
    assert (torch.tensor(direct) > 0.05).all()


def test_augmix_and_reva_losses_are_their_formulas():
    torch.manual_seed(0)
    logits = {name: torch.randn(3, 5, dtype=torch.float64)
              for name in (INPUT, ADVERSARIAL, *AUGMIX_VIEWS)}
    target = torch.tensor([0, 3, 4])
    probs = {k: v.softmax(1).numpy() for k, v in logits.items()}
    ce = {k: -np.log(probs[k][np.arange(3), target.numpy()]) for k in probs}
    mixture = np.clip((probs[INPUT] + probs["augmix1"] + probs["augmix2"]) / 3, 1e-7, 1)
    js = sum((probs[k] * np.log(probs[k] / mixture)).sum(1)
             for k in (INPUT, *AUGMIX_VIEWS)) / 3
    np.testing.assert_allclose(AugMixLoss(12.0)(logits, target).numpy(),
                               ce[INPUT] + 12 * js, rtol=1e-12)
    np.testing.assert_allclose(RevaLoss(0.5, 12.0)(logits, target).numpy(),
                               ce[INPUT] + 0.5 * ce[ADVERSARIAL] + 6 * js, rtol=1e-12)


# ----------------------------------------------------------------------------- PGD counterparts


@pytest.fixture(scope="module")
def train_index(imagenet_sample):
    table, _ = build_index("imagefolder", str(imagenet_sample), exclude_categories16=True,
                           limit=8)
    return table


@pytest.mark.shared
def test_pgd_counterparts_stay_within_eps_and_fool_the_base_model(train_index):
    """EfficientNet-Lite0 on 8 real images: 3 PGD steps at ε = 4/255 are within ε on the
    uint8 pixels and raise the error (the clean images are mostly right)."""
    torch.set_num_threads(1)
    model = load_model("efficientnet-lite0")
    settings = PgdSettings(eps=4 / 255, alpha=2 / 255, steps=3)
    table = counterpart_table(train_index, model, settings, seed=0, batch_size=8)
    assert table.column("image_id").to_pylist() == train_index.column("image_id").to_pylist()
    assert max(table.column("linf").to_pylist()) == 4
    from vcrbench.data.datasets import load_images
    from vcrbench.models import predict

    clean = load_images(train_index.column("path").to_pylist())
    adversarial = counterparts_of_index(table, train_index)
    assert np.abs(adversarial.astype(int) - clean.astype(int)).max() <= 4
    labels = train_index.column("label").to_numpy()
    clean_error = (predict(model, clean)["top1"] != labels).mean()
    adversarial_error = (predict(model, adversarial)["top1"] != labels).mean()
    assert adversarial_error > clean_error
    assert adversarial_error >= 0.75
    # one image crafted alone (another batch) gets the same counterpart, up to float
    # round-off of the batched kernels (at most one grey level)
    alone = craft_counterparts(clean[2:3], labels[2:3], [train_index.column("image_id")[2]
                                                        .as_py()], model, settings, seed=0)
    assert np.abs(alone.astype(int) - adversarial[2:3].astype(int)).max() <= 1


def test_counterpart_shards_cover_the_index_in_order_and_a_missing_one_is_named():
    index = pa.table({"image_id": ["a", "b", "c"], "path": ["x", "y", "z"],
                      "label": pa.array([1, 2, 3], pa.int16())})
    assert shard_rows(index, 1, 2).column("image_id").to_pylist() == ["c"]
    assert shard_rows(index, 2, 2).num_rows == 0
    images = _images(3)
    table = pa.table({"image_id": ["c", "a", "b"], "label": pa.array([3, 1, 2], pa.int16()),
                      "height": pa.array([32] * 3, pa.int32()),
                      "width": pa.array([32] * 3, pa.int32()),
                      "linf": pa.array([0] * 3, pa.int16()),
                      "image": [images[2].tobytes(), images[0].tobytes(), images[1].tobytes()]})
    assert np.array_equal(counterparts_of_index(table, index), images)
    with pytest.raises(VcrbenchError, match="lack 1 training images"):
        counterparts_of_index(table.slice(0, 2), index)


def test_a_scratch_epoch_reads_the_counterparts_of_its_labelled_images(tmp_path):
    from vcrbench.core.tables import write_table
    from vcrbench.training.adversarial import labelled_counterparts

    images = _images(3)
    rows = [pa.table({"image_id": [i], "label": pa.array([label], pa.int16()),
                      "height": pa.array([32], pa.int32()), "width": pa.array([32], pa.int32()),
                      "linf": pa.array([0], pa.int16()), "image": [images[k].tobytes()]})
            for k, (i, label) in enumerate([("a", 1), ("b", 2), ("c", 3)])]
    paths = [str(tmp_path / "shard-0.parquet"), str(tmp_path / "shard-1.parquet")]
    write_table(pa.concat_tables(rows[:2]), paths[0])
    write_table(rows[2], paths[1])
    # "u" has no label, so the epoch does not train on it (scratch.labelled_images)
    index = pa.table({"image_id": ["c", "u", "a"], "path": ["z", "w", "x"],
                      "label": pa.array([3, -1, 1], pa.int16())})
    assert np.array_equal(labelled_counterparts(index, paths), images[[2, 0]])


# ----------------------------------------------------------------------------- REVa epochs


@pytest.mark.shared
def test_a_resumed_reva_epoch_equals_the_uninterrupted_one(train_index, tmp_path):
    """Two REVa epochs (8 images, batches of 4: clean, two AugMix views with Gaussian noise
    among the operations, stand-in counterparts) and epoch 2 again from the saved checkpoint."""
    torch.set_num_threads(1)
    from vcrbench.data.datasets import load_images

    clean = load_images(train_index.column("path").to_pylist())
    adversarial = np.clip(clean.astype(int) + np.random.default_rng(0).integers(
        -8, 9, clean.shape), 0, 255).astype(np.uint8)
    first, row1 = train_epoch(SPEC, train_index, 1, None, CPU, adversarial=adversarial)
    second, row2 = train_epoch(SPEC, train_index, 2, first, CPU, adversarial=adversarial)
    save_checkpoint(first, tmp_path / "epoch-1.pt")
    resumed, row = train_epoch(SPEC, train_index, 2, read_checkpoint(tmp_path / "epoch-1.pt"),
                               CPU, adversarial=adversarial)
    assert all(torch.equal(second["state_dict"][k], resumed["state_dict"][k])
               for k in second["state_dict"])
    assert row == row2 and row1["n_images"] == 8 and row1["n_corrupted"] == 0
    assert not torch.equal(first["state_dict"]["_fc.weight"], second["state_dict"]["_fc.weight"])
    assert second["spec"]["method"] == "reva"
    assert second["spec"]["reva"]["targeted"] == ["gaussian_noise"]
    with pytest.raises(VcrbenchError, match="needs PGD counterparts"):
        train_epoch(SPEC, train_index, 1, None, CPU)


def test_a_standard_spec_stores_the_settings_it_stored_before_methods():
    spec = dataclasses.replace(SPEC, method="standard", reva=RevaSettings())
    assert "method" not in spec.as_dict() and "reva" not in spec.as_dict()
    augmix = dataclasses.replace(SPEC, method="augmix")
    assert augmix.as_dict()["augmix"]["lam"] == 12.0 and "reva" not in augmix.as_dict()


# ----------------------------------------------------------------------------- configuration


LABELLED = {"source": "imagefolder", "path": str(REPO / "tests" / "assets")}
ENTRY = {"name": "ft", "base": "efficientnet-lite0", "train": LABELLED}


def test_method_settings_get_their_defaults():
    config = validate_config({"finetune": [{**ENTRY, "method": "reva",
                                            "reva": {"targeted": ["frost"]}}]})
    entry = config["finetune"][0]
    assert entry["augmix"] == {"width": 3, "depth": None, "alpha": 1.0, "severity": "auto",
                               "lambda": 12}
    assert entry["reva"]["gamma"] == 0.5 and entry["reva"]["severity"] == 3
    assert entry["reva"]["pgd"] == {"eps": "auto", "alpha": "auto", "steps": 40,
                                    "random_start": True, "recraft": False, "shard_size": 100}
    assert entry["geometry"] == {"crop": "auto", "padding": 4, "scale": [0.08, 1.0],
                                 "flip": "auto", "adversarial": "auto"}
    assert entry["clip_grad_norm"] == "auto"
    spec = TrainingSpec.from_config(entry, 0)
    assert spec.reva.targeted == ("frost",) and spec.augmix.lam == 12.0
    # ImageNet-labelled training images: the authors' ImageNet-100 script (AugMix severity 1,
    # PGD 4/255 with step 1/255, random resized crops and flips, the counterpart cropped and
    # flipped on its own draws, no clipping)
    assert spec.augmix.severity == 1.0
    assert (spec.reva.pgd.eps, spec.reva.pgd.alpha) == (4 / 255, 1 / 255)
    assert (spec.crop, spec.crop_scale, spec.flip, spec.adversarial_geometry) == (
        "resized", (0.08, 1.0), True, "independent")
    assert spec.clip_grad_norm is None
    # CIFAR-labelled ones: the authors' CIFAR script (severity 3, 8/255 and 2/255, pad-4 crops
    # and flips, the counterpart as crafted, gradient norm clipped at 1)
    cifar = TrainingSpec.from_config({**entry, "train": {"source": "cifar10", "path": "data"}}, 0)
    assert cifar.augmix.severity == 3.0
    assert (cifar.reva.pgd.eps, cifar.reva.pgd.alpha) == (8 / 255, 2 / 255)
    assert (cifar.crop, cifar.crop_padding, cifar.flip, cifar.adversarial_geometry) == (
        "pad", 4, True, "none")
    assert cifar.clip_grad_norm == 1.0
    # explicit values are kept
    explicit = {**entry, "augmix": {**entry["augmix"], "severity": 2.5},
                "reva": {**entry["reva"], "pgd": {**entry["reva"]["pgd"], "eps": 0.01}},
                "geometry": {"crop": "none", "flip": False}, "clip_grad_norm": None}
    spec = TrainingSpec.from_config(explicit, 0)
    assert (spec.augmix.severity, spec.reva.pgd.eps, spec.reva.pgd.alpha) == (2.5, 0.01, 1 / 255)
    assert (spec.crop, spec.flip, spec.clip_grad_norm) == ("none", False, None)
    # standard (the VCR / NOC fine-tuning): no crop, flip or clipping by default, and the
    # checkpoint's settings keep the keys they had before these existed
    standard = TrainingSpec.from_config(validate_config({"finetune": [ENTRY]})["finetune"][0], 0)
    assert (standard.crop, standard.flip, standard.clip_grad_norm) == ("none", False, None)
    assert not {"crop", "flip", "clip_grad_norm", "crop_scale"} & set(standard.as_dict())
    assert TrainingSpec.from_config(entry, 0).as_dict()["crop_scale"] == [0.08, 1.0]
    assert validate_config({"finetune": [ENTRY]})["finetune"][0]["method"] == "standard"
    auto = {**entry, "reva": {**entry["reva"], "targeted": "auto"}}
    with pytest.raises(VcrbenchError, match="targeted is auto"):
        TrainingSpec.from_config(auto, 0)
    assert TrainingSpec.from_config(auto, 0, ["frost"]).reva.targeted == ("frost",)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"method": "augmix", "augmentation": {"corruption": "frost"}},
         "augmentation.corruption is for method standard"),
        ({"method": "reva", "reva": {"targeted": ["smog"]}}, "'smog' is not a known corruption"),
        ({"method": "reva", "reva": {"targeted": ["noc_rain"]}},
         "noc_rain has no ImageNet-C severities"),
        ({"method": "reva"}, "targeted is auto, which reads .* reva.enabled is false"),
        ({"method": "adversarial"}, "finetune\\[0\\].method"),
        ({"method": "reva", "reva": {"severity": 6}}, "finetune\\[0\\].reva.severity"),
        ({"method": "augmix", "augmix": {"severity": 11}}, "finetune\\[0\\].augmix.severity"),
        ({"method": "augmix", "augmix": {"severity": "high"}},
         "finetune\\[0\\].augmix.severity"),
        ({"method": "augmix", "geometry": {"crop": "random"}},
         "'finetune\\[0\\].geometry.crop' is 'random'; allowed values: auto, none, pad, resized"),
        ({"method": "augmix", "geometry": {"scale": [0.5, 0.2]}},
         "finetune\\[0\\] \\(ft\\): geometry: scale must be \\[lo, hi\\] with 0 < lo <= hi"),
        ({"method": "augmix", "clip_grad_norm": 0}, "finetune\\[0\\].clip_grad_norm"),
        ({"method": "reva_minus", "reva": {"pgd": {"eps": "large"}}},
         "finetune\\[0\\].reva.pgd.eps"),
    ],
)
def test_bad_method_settings_are_named(entry, message):
    with pytest.raises(VcrbenchError, match=message):
        validate_config({"finetune": [{**ENTRY, **entry}]})


def test_targeted_corruptions_are_the_chosen_non_robust_ones_of_the_model():
    rows = [
        ("m", "corruption", "gaussian_noise", "severity", "worst-per-category", True, True),
        ("m", "corruption", "shot_noise", "severity", "worst-per-category", False, True),
        ("m", "corruption", "shot_noise", "severity", "threshold", True, False),
        ("m", "attack", "pgd", "severity", "worst-per-category", True, True),
        ("m", "corruption", "frost", "continuous", "worst-per-category", True, True),
        ("other", "corruption", "frost", "severity", "worst-per-category", True, True),
        ("m", "corruption", "frost", "severity", "worst-per-category", True, True),
    ]
    names = ["model", "kind", "perturbation", "measure", "rule", "non_robust", "chosen"]
    groups = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    assert targeted_from_groups(groups, "m") == ["gaussian_noise", "frost"]
    assert targeted_from_groups(groups, "m", "continuous") == ["frost"]
    with pytest.raises(VcrbenchError, match="no severity rows for absent"):
        targeted_from_groups(groups, "absent")
