"""vcrbench.vif against the slow per-image reference (tests/helpers/vif_reference.py) and its
contract.

The pairs: real ImageNet images (../shared/data, skipped when absent) at 224 x 224 and smaller,
every corruption of the registry, generated images with flat areas under numpy-made
distortions (noise, blur, brightness, contrast, JPEG-like quantisation) at odd and non-square
sizes from 72 px up, an identical pair and flat references. ``exact`` must agree with the
reference to 1e-8, ``fast`` to 1e-4.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import scipy.fft
import torch
from helpers.paths import IMAGENET_SAMPLE
from helpers.vif_reference import SUBBANDS, box_mean, crop, vif_reference, window_size
from PIL import Image
from scipy import ndimage

import vcrbench.vif as vif_module
from vcrbench.errors import VcrbenchError
from vcrbench.vif import delta_v, rgb_to_gray, vif, vif_files, vif_small

EXACT_TOL = 1e-8
FAST_TOL = 1e-4
SIZES = [(72, 72), (73, 95), (100, 77), (81, 120), (96, 96), (128, 90), (75, 160)]
IMAGENET = IMAGENET_SAMPLE


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """One intra-op thread while these tests run: the results do not depend on it, and on a
    machine shared with other jobs, OpenMP threads spin-waiting for descheduled ones make the
    many small tensor operations of the statistics tens of times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ----------------------------------------------------------------------------- image makers


def natural_image(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """(H, W, 3) uint8: multi-scale texture, a few flat rectangles and a saturated corner."""
    img = np.zeros((h, w, 3))
    for sigma, amp in ((1, 20), (3, 40), (8, 60)):
        img += ndimage.gaussian_filter(rng.normal(size=(h, w, 3)), (sigma, sigma, 0)) * amp * sigma
    img = 128 + img / img.std() * 45
    for _ in range(3):
        y0, x0 = rng.integers(0, h - 20), rng.integers(0, w - 20)
        img[y0 : y0 + rng.integers(10, 30), x0 : x0 + rng.integers(10, 30)] = rng.uniform(0, 255, 3)
    img[: h // 3, : w // 3] = 255  # flat, saturated areas: the fast path's hardest case
    img[-h // 4 :, -w // 5 :] = 0
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def jpeg_like(img: np.ndarray, step: float) -> np.ndarray:
    """8 x 8 block-DCT quantisation of every channel (the top-left multiple-of-8 part)."""
    out = img.astype(np.float64).copy()
    h, w = img.shape[0] // 8 * 8, img.shape[1] // 8 * 8
    blocks = out[:h, :w].reshape(h // 8, 8, w // 8, 8, -1)
    coeffs = scipy.fft.dctn(blocks, axes=(1, 3), norm="ortho")
    blocks = scipy.fft.idctn(np.round(coeffs / step) * step, axes=(1, 3), norm="ortho")
    out[:h, :w] = blocks.reshape(h, w, -1)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


DISTORTIONS = {
    "noise": lambda img, rng: img + rng.normal(0, 12, img.shape),
    "blur": lambda img, rng: ndimage.gaussian_filter(img.astype(float), (1.5, 1.5, 0)),
    "brightness": lambda img, rng: img.astype(float) + 60,
    "contrast": lambda img, rng: (img.astype(float) - 128) * 0.4 + 128,
    "jpeg": lambda img, rng: jpeg_like(img, 40.0),
}


def distort(kind: str, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.clip(np.round(DISTORTIONS[kind](img, rng)), 0, 255).astype(np.uint8)


def imagenet_images(count: int, size: tuple[int, int]) -> list[np.ndarray]:
    """Centre crops of the first ImageNet sample images resized to (H, W), as uint8 RGB."""
    out = []
    for path in sorted(IMAGENET.glob("*.JPEG"))[:: 1000 // count][:count]:
        with Image.open(path) as im:
            im = im.convert("RGB")
            w, h = im.size
            side = min(w, h)
            box = ((w - side) // 2, (h - side) // 2, (w + side) // 2, (h + side) // 2)
            out.append(np.array(im.resize(size[::-1], Image.Resampling.BICUBIC, box=box)))
    return out


# ----------------------------------------------------------------------------- the pairs


def generated_pairs() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(20240611)
    pairs = []
    for h, w in SIZES:
        ref = natural_image(rng, h, w)
        for kind in DISTORTIONS:
            pairs.append((f"generated-{h}x{w}-{kind}", ref, distort(kind, ref, rng)))
    pairs.append(("identical-73x95", pairs[5][1], pairs[5][1].copy()))
    flat = np.full((90, 84, 3), 200, np.uint8)
    pairs.append(("flat-ref-noise", flat, distort("noise", flat, rng)))
    pairs.append(("flat-ref-darker", flat, np.full_like(flat, 150)))
    return pairs


def imagenet_pairs() -> list[tuple[str, np.ndarray, np.ndarray]]:
    if not IMAGENET.is_dir():
        return []
    rng = np.random.default_rng(7)
    pairs = []
    kinds = list(DISTORTIONS)
    for i, img in enumerate(imagenet_images(4, (224, 224))):
        pairs.append((f"imagenet-224-{i}-{kinds[i]}", img, distort(kinds[i], img, rng)))
    for i, img in enumerate(imagenet_images(10, (96, 112))):
        kind = kinds[i % len(kinds)]
        pairs.append((f"imagenet-96x112-{i}-{kind}", img, distort(kind, img, rng)))
    return pairs


def corruption_pairs() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Every corruption of the registry once, with parameters drawn from its domain."""
    try:
        from vcrbench.corruptions import CORRUPTIONS, apply_corruption, sample_parameters
    except ImportError:  # the registry lives in another module; nothing to test without it
        return []
    rng = np.random.default_rng(11)
    if IMAGENET.is_dir():
        images = imagenet_images(len(CORRUPTIONS), (88, 104))
    else:
        images = [natural_image(rng, 88, 104) for _ in CORRUPTIONS]
    pairs = []
    for seed, (name, img) in enumerate(zip(CORRUPTIONS, images, strict=True), start=100):
        params = {k: [v] for k, v in sample_parameters(name, rng).items()}
        batch = torch.from_numpy(img).permute(2, 0, 1)[None].to(torch.float32) / 255
        out = apply_corruption(name, batch, params, [seed])[0].permute(1, 2, 0).numpy()
        pairs.append((f"corruption-{name}", img, np.ascontiguousarray(out)))
    return pairs


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """(name, reference, distorted, reference VIF) for every test pair (> 50 of them)."""
    out = []
    for name, ref, dist in generated_pairs() + imagenet_pairs() + corruption_pairs():
        out.append((name, ref, dist, vif_reference(ref, dist)))
    return out


def library_vif(pairs: list, precision: str) -> np.ndarray:
    """vif on each size group of pairs, batched, as (B, 3, H, W) uint8."""
    values = np.empty(len(pairs))
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, (_, ref, _, _) in enumerate(pairs):
        by_shape.setdefault(ref.shape, []).append(i)
    for idx in by_shape.values():
        refs = np.stack([pairs[i][1] for i in idx]).transpose(0, 3, 1, 2)
        dists = np.stack([pairs[i][2] for i in idx]).transpose(0, 3, 1, 2)
        values[idx] = vif(refs, dists, precision=precision, chunk_size=8)
    return values


# ----------------------------------------------------------------------------- the reference


def test_reference_uses_pyrtools_subband_order_and_windows() -> None:
    """The reference's conventions: pyrtools keys (level, band), coarsest first, windows."""
    from pyrtools.pyramids import SteerablePyramidSpace

    pyr = SteerablePyramidSpace(np.zeros((72, 80)), height=4, order=5, edge_type="reflect1")
    keys = list(pyr.pyr_coeffs)
    assert keys[0] == "residual_highpass" and keys[-1] == "residual_lowpass"
    # the port takes every third key from the first band on and reverses: coarsest first
    port = keys[1:-2:3][::-1]
    assert sorted(port) == sorted(SUBBANDS)
    assert [k[0] for k in port] == [k[0] for k in SUBBANDS] == [3, 3, 2, 2, 1, 1, 0, 0]
    assert [window_size(i) for i in range(8)] == [3, 3, 5, 5, 9, 9, 17, 17]
    assert pyr.pyr_coeffs[(3, 0)].shape == (9, 10)
    assert crop(pyr.pyr_coeffs[(3, 0)]).shape == (9, 9)


def test_reference_box_mean_is_the_window_mean() -> None:
    a = np.random.default_rng(0).normal(size=(23, 29))
    for win in (3, 5, 9, 17):
        got = box_mean(a, win)
        for i in range(got.shape[0]):
            for j in range(got.shape[1]):
                window = a[3 * i : 3 * i + win, 3 * j : 3 * j + win]
                assert got[i, j] == pytest.approx(window.mean())


def test_reference_sanity() -> None:
    rng = np.random.default_rng(3)
    img = natural_image(rng, 80, 90)
    assert vif_reference(img, img) == pytest.approx(1.0, abs=1e-12)
    noisy = [vif_reference(img, distort("noise", img, np.random.default_rng(s))) for s in (1, 2)]
    assert all(0.1 < v < 0.95 for v in noisy)
    stronger = np.clip(img + np.random.default_rng(4).normal(0, 40, img.shape), 0, 255)
    assert vif_reference(img, stronger.astype(np.uint8)) < min(noisy)
    # contrast enhancement (without clipping) gives VIF > 1
    low = np.round((img.astype(float) - 128) * 0.5 + 128)
    enhanced = np.round((low - 128) * 1.5 + 128)
    assert vif_reference(low.astype(np.uint8), enhanced.astype(np.uint8)) > 1.05


# ----------------------------------------------------------------------------- agreement


def test_enough_pairs(pairs: list) -> None:
    assert len(pairs) >= 50
    assert {"identical", "flat"} <= {name.split("-")[0] for name, *_ in pairs}


@pytest.mark.parametrize("precision, tol", [("exact", EXACT_TOL), ("fast", FAST_TOL)])
def test_matches_reference(pairs: list, precision: str, tol: float) -> None:
    got = library_vif(pairs, precision)
    want = np.array([p[3] for p in pairs])
    diff = np.abs(got - want)
    worst = int(np.argmax(diff))
    assert diff.max() <= tol, f"{pairs[worst][0]}: {got[worst]} vs reference {want[worst]}"


def test_grayscale_input_matches_rgb(pairs: list) -> None:
    name, ref, dist, want = next(p for p in pairs if p[0].startswith("generated-73x95"))
    gray_ref = cv2.cvtColor(ref, cv2.COLOR_RGB2GRAY)
    gray_dist = cv2.cvtColor(dist, cv2.COLOR_RGB2GRAY)
    got_u8 = vif(gray_ref[None], gray_dist[None], precision="exact")
    got_float = vif(torch.from_numpy(gray_ref[None].astype(np.float64)),
                    torch.from_numpy(gray_dist[None].astype(np.float32)), precision="exact")
    assert got_u8[0] == pytest.approx(want, abs=EXACT_TOL)
    assert got_float[0] == got_u8[0]


def test_identical_pair_is_exactly_one() -> None:
    rng = np.random.default_rng(5)
    img = natural_image(rng, 75, 88).transpose(2, 0, 1)[None]
    other = distort("noise", img[0].transpose(1, 2, 0), rng).transpose(2, 0, 1)[None]
    for precision in ("exact", "fast"):
        got = vif(np.concatenate([img, img]), np.concatenate([img, other]), precision=precision)
        assert got[0] == 1.0
        assert got[1] < 0.9


def test_flat_reference_and_identical_pair_are_one_in_the_reference(pairs: list) -> None:
    for name, *_, want in pairs:
        if name.startswith(("flat-ref", "identical")):
            assert want == pytest.approx(1.0, abs=1e-9)


def test_chunking_and_batching_do_not_change_values() -> None:
    rng = np.random.default_rng(9)
    refs = np.stack([natural_image(rng, 80, 76) for _ in range(5)])
    dists = np.stack([distort(k, r, rng) for k, r in zip(DISTORTIONS, refs, strict=True)])
    refs, dists = refs.transpose(0, 3, 1, 2), dists.transpose(0, 3, 1, 2)
    for precision in ("exact", "fast"):
        whole = vif(refs, dists, precision=precision, chunk_size=32)
        chunked = vif(torch.from_numpy(refs), torch.from_numpy(dists), precision=precision,
                      chunk_size=2)
        single = np.concatenate([vif(r[None], d[None], precision=precision)
                                 for r, d in zip(refs, dists, strict=True)])
        np.testing.assert_array_equal(chunked, whole)  # the same bytes in any chunk
        np.testing.assert_array_equal(single, whole)


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("precision", ["fast", "exact"])
def test_a_pair_gives_the_same_bytes_in_any_chunk(precision: str, device: str,
                                                  monkeypatch) -> None:
    """Determinism: each pair of a chunk of 8 at 224 px (the sub-bands of every level, both
    covariance paths) alone, inside the chunk, in chunks of 3 and in one whole-chunk pass give
    the same float64 bytes on one device; so do pairs sharing references
    (``reference_index``)."""
    rng = np.random.default_rng(12)
    refs = np.stack([natural_image(rng, 224, 224) for _ in range(8)])
    kinds = list(DISTORTIONS)
    dists = np.stack([distort(kinds[i % len(kinds)], r, rng) for i, r in enumerate(refs)])
    refs, dists = refs.transpose(0, 3, 1, 2), dists.transpose(0, 3, 1, 2)
    kw = {"precision": precision, "device": device}
    chunk = vif(refs, dists, chunk_size=8, **kw)
    alone = np.concatenate([vif(refs[i : i + 1], dists[i : i + 1], **kw) for i in range(8)])
    np.testing.assert_array_equal(alone, chunk)
    np.testing.assert_array_equal(vif(refs, dists, chunk_size=3, **kw), chunk)
    monkeypatch.setattr(vif_module, "CPU_PASS_PIXELS", None)  # one pass per chunk (as on GPUs)
    np.testing.assert_array_equal(vif(refs, dists, chunk_size=8, **kw), chunk)
    index = np.array([0, 1, 1, 0, 2, 1, 0, 2])  # three references shared by eight pairs
    shared = vif(refs[:3], dists, chunk_size=8, reference_index=index, **kw)
    written_out = np.concatenate([vif(refs[j : j + 1], dists[i : i + 1], **kw)
                                  for i, j in enumerate(index)])
    np.testing.assert_array_equal(shared, written_out)


def test_operations_per_chunk_do_not_grow_with_its_pairs(monkeypatch) -> None:
    """The statistics are whole-chunk tensor operations: the torch profiler counts the same
    events for a chunk of 2 and of 8 pairs at 224 px (within 10 %; issue 50: launch-bound on
    GPUs), where per-pair or per-cache-group loops would count more for 8."""
    from torch.profiler import ProfilerActivity, profile

    monkeypatch.setattr(vif_module, "CPU_PASS_PIXELS", None)
    rng = np.random.default_rng(13)
    refs = np.stack([natural_image(rng, 224, 224) for _ in range(8)])
    dists = np.stack([distort("noise", r, rng) for r in refs])
    refs, dists = refs.transpose(0, 3, 1, 2), dists.transpose(0, 3, 1, 2)
    vif(refs[:2], dists[:2])  # warm-up: filters, plans
    events = {}
    for n in (2, 8):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            vif(refs[:n], dists[:n], chunk_size=n)
        events[n] = len(prof.events())
    assert abs(events[8] - events[2]) <= 0.1 * events[2], events


def test_shared_references_give_the_pairs_values() -> None:
    # three references, eight pairs in mixed order (one reference used once, one four times,
    # one distorted image equal to its reference): each reference computed once per chunk
    rng = np.random.default_rng(11)
    refs = np.stack([natural_image(rng, 80, 76) for _ in range(3)])
    index = np.array([2, 0, 2, 1, 2, 0, 2, 1])
    kinds = list(DISTORTIONS)
    dists = np.stack([distort(kinds[k % len(kinds)], refs[i], rng)
                      for k, i in enumerate(index)])
    dists[5] = refs[0]
    refs, dists = refs.transpose(0, 3, 1, 2), dists.transpose(0, 3, 1, 2)
    for precision in ("exact", "fast"):
        per_pair = vif(refs[index], dists, precision=precision)
        for chunk in (32, 3):
            shared = vif(refs, dists, precision=precision, chunk_size=chunk,
                         reference_index=index)
            np.testing.assert_allclose(shared, per_pair, rtol=0, atol=1e-12)
            assert shared[5] == 1.0
    # against the slow reference, pair by pair
    got = vif(refs, dists, precision="exact", reference_index=index)
    for k in (0, 3, 4):
        want = vif_reference(refs[index[k]].transpose(1, 2, 0), dists[k].transpose(1, 2, 0))
        assert got[k] == pytest.approx(want, abs=EXACT_TOL)


@pytest.mark.parametrize(
    "index, message",
    [
        (np.array([0, 1]), "one integer per distorted image"),
        (np.array([0.0, 1.0, 0.0]), "one integer per distorted image"),
        (np.array([0, 2, 1]), "outside the 2 reference images"),
        (np.array([0, -1, 1]), "outside the 2 reference images"),
    ],
)
def test_bad_reference_index_is_explained(index, message) -> None:
    refs = np.zeros((2, 3, 80, 80), np.uint8)
    with pytest.raises(VcrbenchError, match=message):
        vif(refs, np.zeros((3, 3, 80, 80), np.uint8), reference_index=index)
    with pytest.raises(VcrbenchError, match="differ in shape"):
        vif(refs, np.zeros((3, 3, 80, 81), np.uint8), reference_index=np.array([0, 1, 0]))


def test_non_contiguous_tensor_input() -> None:
    rng = np.random.default_rng(2)
    ref = natural_image(rng, 72, 90)
    dist = distort("blur", ref, rng)
    # (B, H, W, 3) storage seen as (B, 3, H, W), as the scoring code passes it
    got = vif(torch.from_numpy(ref[None]).permute(0, 3, 1, 2),
              torch.from_numpy(dist[None]).permute(0, 3, 1, 2), precision="exact")
    assert got[0] == pytest.approx(vif_reference(ref, dist), abs=EXACT_TOL)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu() -> None:
    rng = np.random.default_rng(8)
    refs = np.stack([natural_image(rng, 96, 100) for _ in range(3)]).transpose(0, 3, 1, 2)
    dists = np.stack([distort("noise", r.transpose(1, 2, 0), rng) for r in refs])
    dists = dists.transpose(0, 3, 1, 2)
    for precision, tol in (("exact", EXACT_TOL), ("fast", FAST_TOL)):
        cpu = vif(refs, dists, precision=precision)
        gpu = vif(refs, dists, precision=precision, device="cuda")
        np.testing.assert_allclose(gpu, cpu, rtol=0, atol=tol)


# ----------------------------------------------------------------------------- contract


def test_rgb_to_gray_is_opencv_bit_exact() -> None:
    rng = np.random.default_rng(1)
    colours = rng.integers(0, 256, (1 << 20, 3), dtype=np.uint8)
    colours[:256] = np.arange(256)[:, None]  # the grey axis
    img = colours.reshape(1024, 1024, 3)
    want = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float64)
    tensor = torch.from_numpy(img).permute(2, 0, 1)[None]
    got = rgb_to_gray(tensor)
    assert got.dtype == torch.float64 and got.shape == (1, 1024, 1024)
    np.testing.assert_array_equal(got[0].numpy(), want)
    np.testing.assert_array_equal(rgb_to_gray(tensor, torch.float32)[0].numpy(), want)


def test_too_small_images_are_refused() -> None:
    img = np.zeros((1, 3, 71, 100), np.uint8)
    with pytest.raises(VcrbenchError, match="at least 72 px"):
        vif(img, img)
    ok = np.random.default_rng(0).integers(0, 256, (1, 3, 72, 72), dtype=np.uint8)
    assert vif(ok, ok)[0] == 1.0


@pytest.mark.parametrize("precision, tol", [("exact", 1e-9), ("fast", 1e-4)])
def test_two_level_pyramid_on_32px_matches_reference(precision: str, tol: float) -> None:
    """levels=2 (what a 32 x 32 image allows) against pyrtools at height 2, on blurred and
    noisy versions of smooth random images."""
    rng = np.random.default_rng(4)
    for _ in range(6):
        ref = ndimage.gaussian_filter(rng.normal(128, 60, (32, 32, 3)), (1.5, 1.5, 0))
        ref = np.clip(ref, 0, 255).astype(np.uint8)
        dist = np.clip(ref + rng.normal(0, rng.uniform(3, 40), ref.shape), 0, 255).astype(np.uint8)
        want = vif_reference(ref, dist, levels=2)
        got = vif(ref.transpose(2, 0, 1)[None], dist.transpose(2, 0, 1)[None],
                  precision=precision, levels=2)[0]
        assert abs(got - want) <= tol, (got, want)
    with pytest.raises(VcrbenchError, match="2-level steerable pyramid needs at least 18 px"):
        vif(np.zeros((1, 3, 17, 17), np.uint8), np.zeros((1, 3, 17, 17), np.uint8), levels=2)
    with pytest.raises(VcrbenchError, match="levels must be 1 to 4"):
        vif(np.zeros((1, 3, 80, 80), np.uint8), np.zeros((1, 3, 80, 80), np.uint8), levels=5)


@pytest.mark.parametrize(
    "ref, dist, kwargs, message",
    [
        (np.zeros((2, 3, 80, 80), np.uint8), np.zeros((1, 3, 80, 80), np.uint8), {}, "differ"),
        (np.zeros((1, 3, 80, 80), np.float32), np.zeros((1, 3, 80, 80), np.float32), {},
         "uint8 RGB"),
        (np.zeros((80, 80), np.uint8), np.zeros((80, 80), np.uint8), {}, "grayscale"),
        (np.zeros((1, 80, 80)), np.zeros((1, 80, 80)), {"precision": "double"}, "precision"),
        (np.zeros((1, 80, 80)), np.zeros((1, 80, 80)), {"chunk_size": 0}, "chunk_size"),
    ],
)
def test_bad_input_is_explained(ref, dist, kwargs, message) -> None:
    with pytest.raises(VcrbenchError, match=message):
        vif(ref, dist, **kwargs)


def test_empty_batch() -> None:
    empty = np.zeros((0, 3, 80, 80), np.uint8)
    assert vif(empty, empty).shape == (0,)
    assert vif(np.zeros((2, 3, 80, 80), np.uint8), empty, reference_index=[]).shape == (0,)


def test_delta_v() -> None:
    got = delta_v(np.array([1.0, 1.3, 0.25, 0.0]))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.75, 1.0])


def test_vif_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    a = natural_image(rng, 80, 96)
    b = distort("jpeg", a, rng)
    c = natural_image(rng, 100, 90)
    paths = {}
    for name, img in (("a.png", a), ("b.png", b), ("c.png", c)):
        paths[name] = str(tmp_path / name)
        Image.fromarray(img).save(paths[name])
    Image.fromarray(cv2.cvtColor(c, cv2.COLOR_RGB2GRAY)).save(tmp_path / "c-gray.png")
    pairs = [(paths["a.png"], paths["b.png"]), (paths["c.png"], str(tmp_path / "c-gray.png")),
             (paths["a.png"], paths["a.png"])]
    results = vif_files(pairs, precision="exact")
    assert [r["reference"] for r in results] == [p[0] for p in pairs]
    assert results[0]["vif"] == pytest.approx(vif_reference(a, b), abs=EXACT_TOL)
    assert results[0]["dv"] == pytest.approx(1 - results[0]["vif"])
    assert results[1]["vif"] == 1.0  # the grey version has the same OpenCV grey levels
    assert results[2] == {"reference": paths["a.png"], "distorted": paths["a.png"],
                          "vif": 1.0, "dv": 0.0}
    json.dumps(results)
    with pytest.raises(VcrbenchError, match="same size"):
        vif_files([(paths["a.png"], paths["c.png"])])
    with pytest.raises(VcrbenchError, match="does not exist"):
        vif_files([(paths["a.png"], str(tmp_path / "missing.png"))])


def test_vif_small_enlarges_for_the_paper_vif() -> None:
    """``enlarge``: pyrtools' reference VIF on Pillow-bicubic 224 px enlargements; ``pyramid``:
    the 2-level pyramid a 32 px image allows."""
    rng = np.random.default_rng(5)
    ref = np.clip(ndimage.gaussian_filter(rng.normal(128, 60, (2, 32, 32, 3)), (0, 1, 1, 0)),
                  0, 255).astype(np.uint8)
    dist = np.clip(ref + rng.normal(0, 20, ref.shape), 0, 255).astype(np.uint8)
    got = vif_small(ref.transpose(0, 3, 1, 2), dist.transpose(0, 3, 1, 2))
    for i in range(2):
        big = [np.asarray(Image.fromarray(a[i]).resize((224, 224), Image.Resampling.BICUBIC))
               for a in (ref, dist)]
        assert abs(got[i] - vif_reference(*big)) <= 1e-4
    two = vif_small(ref.transpose(0, 3, 1, 2), dist.transpose(0, 3, 1, 2), method="pyramid")
    assert abs(two[0] - vif_reference(ref[0], dist[0], levels=2)) <= 1e-4
    with pytest.raises(VcrbenchError, match="method 'pixel'"):
        vif_small(ref.transpose(0, 3, 1, 2), ref.transpose(0, 3, 1, 2), method="pixel")
