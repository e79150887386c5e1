"""The REVa paper's published part-2 numbers, printed beside a run's own comparison.

``PUBLISHED[name]`` holds one set of rows: top-1 errors in percent per method, as the paper
reports them (the REVa paper, "A Validation Strategy for Deep Learning Models: Evaluating and
Enhancing Robustness", Table 2(a): CIFAR-10-adv, the six attacks crafted on the
standard model and their mean, Eq. 5 and 6, with the clean error Err; Table 3 and §4.3.3:
CIFAR-10-C mCE, Eq. 8). Only AllConvNet's rows are complete in the paper's text (DenseNet's and
WRN-40-2's CIFAR-10-C rows of Standard and AugMix are not recoverable from it), and REVa⁻ has
no CIFAR-10 numbers for AllConvNet (its Figures 5 to 8 only), so the table has AllConvNet's
Standard, AugMix and REVa. The paper's attack UMIFGSM is the untargeted MI-FGSM (``mifgsm``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

#: Measures of a published row: clean error, the six attacks, their mean, mCE (percent).
MEASURES = ("clean", "bim", "fgsm", "pgd", "rfgsm", "uap", "mifgsm", "mean_adversarial", "mCE")


def _row(*values: float) -> Mapping[str, float]:
    return MappingProxyType(dict(zip(MEASURES, values, strict=True)))


#: name -> (what the rows are, the models behind them, method label -> row).
PUBLISHED = MappingProxyType({
    "cifar10-allconvnet": (
        "REVa paper, Table 2(a) (CIFAR-10-adv: Err and the six attacks crafted on the standard "
        "model, their mean) and Table 3 with §4.3.3 (CIFAR-10-C mCE)",
        "AllConvNet trained from scratch for 100 epochs with AugMix's recipe on the original "
        "CIFAR-10, evaluated on its 10,000 test images and CIFAR-10-C's files",
        MappingProxyType({
            "Standard": _row(6.10, 43.64, 48.16, 55.27, 33.75, 86.15, 51.35, 53.07, 31.645),
            "AugMix": _row(6.50, 18.40, 20.63, 18.41, 15.61, 46.86, 24.54, 24.08, 15.603),
            "REVa": _row(6.31, 8.67, 10.94, 8.28, 8.03, 26.11, 10.89, 12.15, 10.894),
        }),
    ),
})


def published_text(name: str, errors: Sequence[Mapping[str, object]],
                   methods: Sequence[str], transfer_from: str | None) -> list[str]:
    """Markdown lines: the published rows ``name`` next to this run's numbers of the methods
    with the same label (``errors``: rows of the comparison's errors table; fractions there,
    percent here). The adversarial column of the run is its *transfer* mean (the attacks
    crafted on ``transfer_from``, the paper's protocol), or the white-box mean without one."""
    source, models, rows = PUBLISHED[name]
    by = {(r["method"], r["kind"], r["perturbation"]): r["value"] for r in errors}
    adversarial = "transfer" if transfer_from else "white-box"

    def ours(method: str, kind: str, perturbation: str) -> str:
        value = by.get((method, kind, perturbation))
        return "–" if value is None else f"{100 * float(value):.2f}"

    lines = ["", "## The paper's numbers for these methods", "",
             f"{source}: {models}. This run's models, budget and data differ (header), so "
             "compare the order of the methods and the sizes of their gaps, not the levels. "
             f"Percent; this run's adversarial errors are the {adversarial} ones"
             + (f" (crafted on {transfer_from})" if transfer_from else "") + ".", "",
             "| method | Err (paper) | Err (this run) | mean adv. err (paper) | "
             "mean adv. err (this run) | mCE (paper) | mCE (this run) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for method in (*methods, *[m for m in rows if m not in methods]):
        paper = rows.get(method)
        cells = [f"{paper[k]:.2f}" if paper else "–" for k in ("clean", "mean_adversarial")]
        mce = f"{paper['mCE']:.3f}" if paper else "–"
        lines.append(
            f"| {method} | {cells[0]} | {ours(method, 'clean', 'clean')} | {cells[1]} | "
            f"{ours(method, adversarial, 'mean_adversarial')} | {mce} | "
            f"{ours(method, 'corruption', 'mCE')} |")
    return lines
