"""Tests of the NOC appendix-A corruptions (``vcrbench.corruptions.noc_table``).

There is no peer package: the paper gives one sentence per corruption. Each test below checks
that sentence on hand-made images, against a slow per-pixel reference (loops over pixels and
shapes, written from the description, not from our vectorised code), or, for the thumbnail
resize, against PIL's bilinear resize (what the authors' code calls). Tolerances are stated per
test; the registry-wide tests of test_corruptions.py / test_spacing.py check the rest (domains,
spacing, tiny steps from the clean value, small non-square images).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import CORRUPTIONS, apply_corruption, get_corruption, uniform_samples
from vcrbench.corruptions import noc_table as noc
from vcrbench.corruptions.generators import numpy_generator

NOC = ["noc_quantization", "noc_salt_pepper", "noc_blur", "noc_thumbnail_resize", "noc_pixelate",
       "noc_artifacts", "noc_vertical_artifacts", "noc_rhombus", "noc_rain", "noc_circles",
       "noc_obstruction"]
#: The appendix A table, in our parameters.
PAPER_RANGES = {
    "noc_quantization": ("levels", 4, 9), "noc_salt_pepper": ("probability", 0.003, 0.032),
    "noc_blur": ("weight", 0.4, 0.95), "noc_thumbnail_resize": ("factor", 1.1, 3.25),
    "noc_pixelate": ("size", 2, 4), "noc_artifacts": ("count", 15, 170),
    "noc_vertical_artifacts": ("count", 15, 180), "noc_rhombus": ("count", 9, 76),
    "noc_rain": ("count", 12, 120), "noc_circles": ("count", 7, 50),
    "noc_obstruction": ("side", 47, 125),
}


def rand_images(n: int, h: int, w: int, seed: int = 0) -> torch.Tensor:
    """Random 8-bit images as float64 in [0, 1]."""
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.integers(0, 256, (n, 3, h, w)) / 255.0)


def run(name: str, images: torch.Tensor, value: float, seeds=None) -> np.ndarray:
    """The float output of a corruption's function, one parameter value for every image."""
    spec = get_corruption(name)
    (param,) = spec.parameters
    seeds = list(range(1, len(images) + 1)) if seeds is None else seeds
    out = spec.function(images, {param: np.full(len(images), float(value))}, seeds)
    return out.numpy()


def grey(n: int, h: int, w: int, value: float = 0.5) -> torch.Tensor:
    return torch.full((n, 3, h, w), value, dtype=torch.float64)


# --------------------------------------------------------------------------- registry


@pytest.mark.parametrize("name", NOC)
def test_entries_hold_the_papers_range_and_run_from_clean(name):
    spec = get_corruption(name)
    param, low, high = PAPER_RANGES[name]
    assert spec.source == "noc" and list(spec.parameters) == [param]
    assert spec.imagenet_c_severities is None and dict(spec.source_range) == {param: (low, high)}
    d_low, d_high = spec.parameters[param]
    assert d_low <= low < high <= d_high
    assert {spec.identity[param], spec.strongest[param]} == {d_low, d_high}
    assert spec.stochastic == (name not in ("noc_quantization", "noc_blur", "noc_thumbnail_resize",
                                            "noc_pixelate"))
    assert name in CORRUPTIONS and spec.docs


@pytest.mark.parametrize("name", NOC)
def test_outputs_depend_only_on_image_parameters_and_seed(name):
    """Same seed: same bytes; batch splits and float64 input change nothing (within one level
    on a few pixels); another seed changes a stochastic corruption."""
    x = rand_images(5, 48, 64, seed=3).float()
    params = uniform_samples(name, 11, range(5))
    batch = {k: [p[k] for p in params] for k in params[0]}
    seeds = [noise_seed(11, name, i) for i in range(5)]
    whole = apply_corruption(name, x, batch, seeds)
    assert torch.equal(whole, apply_corruption(name, x, batch, seeds))
    parts = [apply_corruption(name, x[s], {k: v[s] for k, v in batch.items()}, seeds[s])
             for s in (slice(0, 2), slice(2, 5))]
    assert torch.equal(whole, torch.cat(parts))
    single = apply_corruption(name, x[3:4], {k: v[3:4] for k, v in batch.items()}, seeds[3:4])
    assert torch.equal(whole[3:4], single)
    wide = apply_corruption(name, x.double(), batch, seeds)
    d = (whole.int() - wide.int()).abs()
    assert d.max() <= 1 and d.float().mean() < 0.02
    if get_corruption(name).stochastic:
        assert not torch.equal(whole, apply_corruption(name, x, batch, [s + 1 for s in seeds]))


@pytest.mark.parametrize("name", NOC)
def test_domain_runs_from_clean_to_destroyed(name):
    """Clean end: the image itself. Strongest end: a flat, black-and-white or single-valued
    image (occlusions: one value, random greys or white on 99 % of the pixels: shapes are
    anchored on the image's pixels, so the border is covered less), except quantization (8
    colours) and blur (five box passes), whose strongest settings are as far as they go."""
    spec = get_corruption(name)
    x = rand_images(2, 112, 112, seed=5).float()
    seeds = [7, 8]
    clean = apply_corruption(name, x, {k: [v] * 2 for k, v in spec.identity.items()}, seeds)
    assert torch.equal(clean, (x * 255).round().to(torch.uint8))
    out = apply_corruption(name, x, {k: [v] * 2 for k, v in spec.strongest.items()}, seeds)
    out = out.numpy().astype(np.int64)
    if name == "noc_quantization":
        assert set(np.unique(out)) == {0, 255}
    elif name == "noc_salt_pepper":
        assert set(np.unique(out)) == {0, 255} and (out.std(axis=1) == 0).all()
    elif name == "noc_blur":
        inner = out[:, :, 8:-8, 8:-8]
        assert inner.std() < 0.3 * (x.numpy() * 255).std()
    elif name in ("noc_rhombus", "noc_circles"):  # a mosaic of greys: R = G = B almost everywhere
        assert ((out[:, 0] == out[:, 1]) & (out[:, 1] == out[:, 2])).mean() > 0.99
    elif name == "noc_rain":  # white, but for a few pixels at the border under fewer discs
        assert (out >= 250).mean() > 0.995
    elif spec.visual_class == "occlusion":
        for image in out.reshape(2, -1):
            assert np.bincount(image).max() > 0.995 * image.size
    else:
        assert (out.reshape(2, -1).std(axis=1) < 1).all(), out.reshape(2, -1).std(axis=1)


# --------------------------------------------------------------------------- quantization


def test_quantization_has_exactly_k_levels():
    ramp = torch.arange(256, dtype=torch.float64).div(255).repeat(3, 256, 1)[None]  # all values
    for levels, k in [(2, 2), (3.49, 3), (3.5, 4), (4, 4), (9, 9), (17.2, 17), (255.6, 256)]:
        out = run("noc_quantization", ramp, levels)
        values = np.unique(out)
        assert len(values) == k, (levels, len(values))
        np.testing.assert_allclose(values, np.arange(k) / (k - 1), atol=1e-12)
        # every value goes to the nearest level (per pixel reference)
        x = ramp.numpy()
        nearest = np.array([min(range(k), key=lambda j, v=v: abs(v - j / (k - 1))) / (k - 1)
                            for v in x[0, 0, 0]])
        np.testing.assert_allclose(out[0, 0, 0], nearest, atol=1e-12)


# --------------------------------------------------------------------------- salt and pepper


def test_salt_pepper_changes_whole_pixels_with_the_given_probability():
    x = grey(1, 200, 200)
    for p in (0.003, 0.032, 0.4):
        out = apply_corruption("noc_salt_pepper", x.float(), {"probability": [p]}, [42])
        out = out[0].numpy().astype(np.int64)
        changed = (out != 128).any(axis=0)
        assert ((out[:, changed] == 0).all(axis=0) | (out[:, changed] == 255).all(axis=0)).all()
        assert (out[:, ~changed] == 128).all()
        n = changed.size
        assert abs(changed.mean() - p) < 4 * np.sqrt(p * (1 - p) / n)
        white = (out[0] == 255).sum()
        assert abs(white - changed.sum() / 2) < 4 * np.sqrt(changed.sum() / 4) + 1
        salt, pepper = noc.salt_pepper_masks(42, 200, 200, p)
        assert np.array_equal(salt, out[0] == 255) and np.array_equal(pepper, out[0] == 0)


# --------------------------------------------------------------------------- blur


def _box5_reference(image: np.ndarray) -> np.ndarray:
    """Five passes of a 3 x 3 box of ones / 9 with zero padding, one pixel at a time."""
    c, h, w = image.shape
    x = image.copy()
    for _ in range(5):
        y = np.zeros_like(x)
        for ch in range(c):
            for i in range(h):
                for j in range(w):
                    total = 0.0
                    for di in (-1, 0, 1):
                        for dj in (-1, 0, 1):
                            if 0 <= i + di < h and 0 <= j + dj < w:
                                total += x[ch, i + di, j + dj]
                    y[ch, i, j] = total / 9.0
        x = y
    return x


def test_blur_interpolates_with_five_box_passes():
    x = rand_images(1, 13, 17, seed=9)
    reference = _box5_reference(x[0].numpy())
    np.testing.assert_allclose(noc.box5_blur(x[0]).numpy(), reference, atol=1e-12)
    for weight in (0.0, 0.4, 0.95, 1.0):
        out = run("noc_blur", x, weight)[0]
        np.testing.assert_allclose(out, (1 - weight) * x[0].numpy() + weight * reference,
                                   atol=1e-12)
    # a flat image stays flat inside and darkens towards the zero-padded border
    flat = run("noc_blur", grey(1, 40, 40), 1.0)[0, 0]
    np.testing.assert_allclose(flat[5:-5, 5:-5], 0.5, atol=1e-12)
    assert flat[0, 0] < flat[0, 20] < flat[5, 20]


# --------------------------------------------------------------------------- thumbnail resize


def _pil_resize(channel: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    image = Image.fromarray(channel.astype(np.float32), mode="F")
    return np.asarray(image.resize((size[1], size[0]), Image.BILINEAR), dtype=np.float64)


@pytest.mark.parametrize(("h", "w", "factor"), [(224, 224, 2.0), (224, 224, 3.2), (112, 84, 1.75),
                                                (64, 48, 16.0), (224, 224, 224.0)])
def test_thumbnail_resize_is_pil_bilinear_twice(h, w, factor):
    """Where H / factor and W / factor are integers: PIL's bilinear resize down and up (mode F,
    float32), within 1e-5 (float32 round-off)."""
    x = rand_images(1, h, w, seed=2)
    out = run("noc_thumbnail_resize", x, factor)[0]
    small = (round(h / factor), round(w / factor))
    for c in range(3):
        ref = _pil_resize(_pil_resize(x[0, c].numpy(), small), (h, w))
        np.testing.assert_allclose(out[c], ref, atol=1e-5)


def test_thumbnail_resize_is_continuous_in_the_factor():
    x = rand_images(1, 64, 64, seed=4)
    near = run("noc_thumbnail_resize", x, 1.0 + 1e-9)
    assert np.abs(near - x.numpy()).max() < 1e-6
    steps = [np.abs(run("noc_thumbnail_resize", x, f) - x.numpy()).mean()
             for f in (1.0001, 1.001, 1.01, 1.1, 2.0)]
    assert steps == sorted(steps) and steps[0] < 0.01
    assert noc.thumbnail_size(224, 200, 3.25) == (69, 62)


# --------------------------------------------------------------------------- pixelate


def _pixelate_reference(image: np.ndarray, s: int) -> np.ndarray:
    """Blocks of s x s px from the top-left corner shifted back by half the excess; each pixel
    takes the mean of the pixels of its block that are inside the image."""
    _, h, w = image.shape
    off_h, off_w = (-(-h // s) * s - h) // 2, (-(-w // s) * s - w) // 2
    out = np.empty_like(image)
    for i in range(h):
        for j in range(w):
            bi, bj = (i + off_h) // s, (j + off_w) // s
            rows = [r for r in range(h) if (r + off_h) // s == bi]
            cols = [c for c in range(w) if (c + off_w) // s == bj]
            out[:, i, j] = image[:, rows][:, :, cols].mean(axis=(1, 2))
    return out


def test_pixelate_averages_blocks():
    x = rand_images(1, 37, 45, seed=6)
    scale = 224 / 37
    for size, s in [(2 * scale, 2), (3.4 * scale, 3), (5 * scale, 5), (40 * scale, 40)]:
        assert noc.pixelate_block(size, 37, 45) == s
        out = run("noc_pixelate", x, size)[0]
        np.testing.assert_allclose(out, _pixelate_reference(x[0].numpy(), s), atol=1e-12)
    assert noc.pixelate_block(1.49, 224, 224) == 1 and noc.pixelate_block(1.5, 224, 224) == 2


@pytest.mark.parametrize("s", [2, 4])
def test_pixelate_is_mean_pooling_and_nearest_upsampling_at_224(s):
    """The authors' construction where s divides 224: avg_pool2d(s, stride s), then repeat."""
    x = rand_images(1, 224, 224, seed=8)
    pooled = torch.nn.functional.avg_pool2d(x, s, stride=s)
    ref = pooled.repeat_interleave(s, dim=2).repeat_interleave(s, dim=3)
    np.testing.assert_allclose(run("noc_pixelate", x, s), ref.numpy(), atol=1e-12)


# --------------------------------------------------------------------------- shapes


def _shape_draws(seed: int, n: int, h: int, w: int, values: bool, shared_grey: bool = False):
    """The documented draws, written out: [grey], then rows of rng.random((n, 3 or 2))."""
    rng = numpy_generator(seed)
    g = rng.random() if shared_grey else None
    u = rng.random((n, 3 if values else 2))
    anchors = [(int(a * h), int(b * w)) for a, b in u[:, :2]]
    return g, anchors, (list(u[:, 2]) if values else None)


def _in_disc(dy: int, dx: int) -> bool:
    return dy * dy + dx * dx <= 49


def _in_rhombus(dy: int, dx: int) -> bool:
    return abs(dy) + abs(dx) <= 7


def _in_artifact(dy: int, dx: int) -> bool:
    """Rows -1..1; columns -10..-6, -2..2, 6..10 (three 5 px dashes, 3 px gaps)."""
    return abs(dy) <= 1 and (abs(dx) <= 2 or 6 <= abs(dx) <= 10)


def _paint_reference(image: np.ndarray, anchors, values, inside) -> np.ndarray:
    out = image.copy()
    _, h, w = image.shape
    for (r, c), v in zip(anchors, values, strict=True):
        for i in range(max(0, r - 10), min(h, r + 11)):
            for j in range(max(0, c - 10), min(w, c + 11)):
                if inside(i - r, j - c):
                    out[:, i, j] = v
    return out


@pytest.mark.parametrize(("name", "inside", "area"), [("noc_circles", _in_disc, 149),
                                                      ("noc_rhombus", _in_rhombus, 113)])
def test_circles_and_rhombi_are_filled_with_one_grey_each(name, inside, area):
    x = rand_images(1, 224, 224, seed=10)
    n = 40
    _, anchors, values = _shape_draws(77, n, 224, 224, values=True)
    out = run(name, x, n, seeds=[77])[0]
    np.testing.assert_array_equal(out, _paint_reference(x[0].numpy(), anchors, values, inside))
    offsets = noc.disc_offsets(7.0) if name == "noc_circles" else noc.rhombus_offsets(7.0)
    assert len(offsets) == area and all(inside(int(dy), int(dx)) for dy, dx in offsets)


def test_rain_brightens_discs_once_per_disc():
    """p <- (p + 1) / 2 inside every radius-7 disc, the discs applied one after the other."""
    x = rand_images(1, 224, 224, seed=11)
    n = 120
    _, anchors, _ = _shape_draws(5, n, 224, 224, values=False)
    ref = x[0].numpy().copy()
    for r, c in anchors:
        for i in range(max(0, r - 7), min(224, r + 8)):
            for j in range(max(0, c - 7), min(224, c + 8)):
                if _in_disc(i - r, j - c):
                    ref[:, i, j] = (ref[:, i, j] + 1) / 2
    np.testing.assert_allclose(run("noc_rain", x, n, seeds=[5])[0], ref, atol=1e-12)
    # a black image: one disc is a 149 px disc of 0.5
    single = run("noc_rain", grey(1, 224, 224, 0.0), 1, seeds=[3])[0, 0]
    (r, c), = _shape_draws(3, 1, 224, 224, values=False)[1]
    expected = np.zeros((224, 224))
    for i in range(224):
        for j in range(224):
            if _in_disc(i - r, j - c):
                expected[i, j] = 0.5
    np.testing.assert_array_equal(single, expected)


@pytest.mark.parametrize("vertical", [False, True])
def test_artifacts_are_small_dotted_lines_of_one_grey(vertical):
    name = "noc_vertical_artifacts" if vertical else "noc_artifacts"
    x = rand_images(1, 224, 224, seed=12)
    n = 60
    g, anchors, _ = _shape_draws(9, n, 224, 224, values=False, shared_grey=True)
    inside = (lambda dy, dx: _in_artifact(dx, dy)) if vertical else _in_artifact
    ref = _paint_reference(x[0].numpy(), anchors, [g] * n, inside)
    np.testing.assert_array_equal(run(name, x, n, seeds=[9])[0], ref)
    # one dotted line on black, well inside: 45 px in three 5 x 3 dashes
    offsets = noc.artifact_offsets(1.0, vertical)
    assert len(offsets) == 45 and all(inside(int(dy), int(dx)) for dy, dx in offsets)


def test_obstruction_is_one_square_of_one_grey():
    x = rand_images(1, 224, 224, seed=13)
    for side, seed in [(47, 1), (125, 2), (90.5, 3)]:
        s = round(side + 1e-9) if side != 90.5 else 91
        out = run("noc_obstruction", x, side, seeds=[seed])[0]
        g, u_top, u_left = numpy_generator(seed).random(3)
        top, left = int(u_top * (224 - s + 1)), int(u_left * (224 - s + 1))
        ref = x[0].numpy().copy()
        for i in range(top, top + s):
            for j in range(left, left + s):
                ref[:, i, j] = g
        np.testing.assert_array_equal(out, ref)


def test_counts_and_sizes_scale_with_the_image():
    assert noc.scaled_count(170, 224, 224) == 170 and noc.scaled_count(170, 448, 448) == 170
    assert noc.scaled_count(170, 112, 224) == 340 and noc.scaled_count(170, 96, 32) == 510
    assert noc.scaled_count(0.49, 224, 224) == 0 and noc.scaled_count(0.5, 224, 224) == 1
    assert len(noc.disc_offsets(7.0 * noc.length_scale(448, 600))) == len(noc.disc_offsets(14.0))
    assert noc.obstruction_side(125, 448, 448) == 250 and noc.obstruction_side(224, 64, 96) == 64
    assert noc.pixelate_block(4, 448, 512) == 8
    assert len(noc.artifact_offsets(2.0)) == 3 * 10 * 6  # dashes 10 x 6 px at 448 px


@pytest.mark.parametrize("name", ["noc_rain", "noc_circles", "noc_artifacts", "noc_rhombus"])
def test_a_larger_count_adds_shapes_to_the_same_picture(name):
    """Shape i is the same whatever the count: the clean pixels of count 200 include those of
    count 300, and both share the first 200 shapes."""
    x = rand_images(1, 96, 96, seed=14)
    few, many = run(name, x, 200), run(name, x, 300)
    untouched_many = (many == x.numpy()).all(axis=1)
    untouched_few = (few == x.numpy()).all(axis=1)
    assert (untouched_few | ~untouched_many).all() and untouched_few.sum() > untouched_many.sum()
