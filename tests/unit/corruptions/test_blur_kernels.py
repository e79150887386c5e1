"""The batched kernel builders of ``corruptions.kernels`` against the per-sample references
(``gaussian_taps``, ``filter_matrix``, ``imagenet_c_disk``, ``motion_taps``), ImageNet-C's own
``disk`` and scipy's correlation: each sample of a batch of mixed parameters must equal its
reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.peers import imagecorruptions_module
from scipy import ndimage

from vcrbench.corruptions import kernels


def test_gaussian_taps_table_and_filter_matrices_are_the_references():
    sigmas = np.array([0.0, 0.1, 0.124, 0.2, 1.0, 3.7, 6.0, 12.5, 40.0])
    table = kernels.gaussian_taps_table(torch.from_numpy(sigmas), 160)
    for n in (32, 45, 224):
        matrices = kernels.replicate_filter_matrices(table, n)
        for b, sigma in enumerate(sigmas):
            taps = kernels.gaussian_taps(sigma)
            r = len(taps) // 2
            np.testing.assert_allclose(table[b, 160 - r:161 + r].numpy(), taps, rtol=1e-14)
            assert float(table[b].sum() - table[b, 160 - r:161 + r].sum()) == 0
            np.testing.assert_allclose(matrices[b].numpy(),
                                       kernels.filter_matrix(n, taps, "replicate"), atol=1e-15)


def test_banded_filter_is_the_dense_filter():
    rng = np.random.default_rng(1)
    images = torch.from_numpy(rng.random((4, 3, 45, 37)))
    table = kernels.gaussian_taps_table(torch.tensor([0.0, 0.7, 3.0, 6.0],
                                                     dtype=torch.float64), 24)
    for block in (8, 32):
        out = kernels.banded_filter(images, table, block)
        for b in range(4):
            taps = table[b].numpy()
            ref = kernels.separable_filter(images[b], taps, taps, "replicate")
            np.testing.assert_allclose(out[b].numpy(), ref.numpy(), atol=1e-14)
    assert torch.equal(out[0], images[0])  # sigma 0: the identity, exactly


def test_defocus_kernels_are_imagenet_cs_disks():
    radius = np.array([0.0, 0.5, 1.0, 2.5, 3.0, 7.9, 8.0, 8.5, 9.0, 10.0, 17.3, 30.0])
    alias = np.array([0.1, 0.4, 0.5, 0.6, 0.1, 0.5, 0.5, 0.3, 0.5, 0.5, 0.2, 0.5])
    out = kernels.defocus_kernels(torch.from_numpy(radius), torch.from_numpy(alias), 30)
    assert out.shape == (12, 61, 61)
    for b, (r, a) in enumerate(zip(radius, alias, strict=True)):
        ref = kernels.imagenet_c_disk(r, a)
        half = ref.shape[0] // 2
        crop = out[b, 30 - half:31 + half, 30 - half:31 + half].numpy()
        np.testing.assert_allclose(crop, ref, atol=1e-15, rtol=1e-12)
        assert float(out[b].abs().sum()) == pytest.approx(float(np.abs(ref).sum()), rel=1e-12)
    ic = imagecorruptions_module()
    for r, a in [(3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)]:  # ImageNet-C's settings
        one = kernels.defocus_kernels(torch.tensor([float(r)], dtype=torch.float64),
                                      torch.tensor([a], dtype=torch.float64), 30)[0]
        ref = ic.disk(radius=r, alias_blur=a)
        half = ref.shape[0] // 2
        np.testing.assert_allclose(one[30 - half:31 + half, 30 - half:31 + half].numpy(), ref,
                                   atol=1e-8)


def test_motion_kernels_are_imagenet_cs_taps():
    radius = np.array([0.0, 0.4, 1.0, 3.0, 10.0, 15.0, 40.0, 100.0, 100.0, 20.0])
    sigma = np.array([3.0, 1.0, 0.0, 1e-12, 3.0, 8.0, 20.0, 60.0, 1.0, 15.0])
    angle = np.array([0.0, 10.0, -45.0, 45.0, -17.3, 31.9, -44.9, 7.0, -30.0, 45.0])
    for h, w in ((224, 224), (33, 47)):
        out, flip = kernels.motion_kernels(torch.from_numpy(radius), torch.from_numpy(sigma),
                                           torch.from_numpy(angle), h, w, 201)
        e_max, c_max = kernels.motion_extent(201, h, w)
        assert out.shape == (10, e_max + 1, c_max + 1)
        assert torch.equal(flip, torch.from_numpy(angle < 0))
        for b in range(10):
            ref = np.zeros(out.shape[1:])
            for dy, dx, weight in kernels.motion_taps(radius[b], sigma[b], angle[b], h, w):
                assert dx <= 0 and (dy <= 0 if angle[b] >= 0 else dy >= 0)
                ref[abs(dy), -dx] += weight
            # motion_taps drops taps under 1e-9 of the total
            np.testing.assert_allclose(out[b].numpy(), ref, atol=1e-8)


@pytest.mark.parametrize(("mode", "scipy_mode"), [("replicate", "nearest"),
                                                  ("reflect101", "mirror")])
def test_fft_correlate_is_scipys_correlation(mode, scipy_mode):
    rng = np.random.default_rng(2)
    images = rng.random((2, 3, 40, 34))
    kern = rng.random((2, 9, 7))
    out = kernels.fft_correlate(torch.from_numpy(images), torch.from_numpy(kern), (4, 3), mode)
    for b in range(2):
        for c in range(3):
            ref = ndimage.correlate(images[b, c], kern[b], mode=scipy_mode)
            np.testing.assert_allclose(out[b, c].numpy(), ref, atol=1e-12)
    # a kernel reaching only down and right (motion blur's)
    out = kernels.fft_correlate(torch.from_numpy(images), torch.from_numpy(kern), (0, 0),
                                "replicate")
    padded = np.pad(images, ((0, 0), (0, 0), (0, 8), (0, 6)), mode="edge")
    for b in range(2):
        ref = sum(kern[b, u, v] * padded[b, :, u:u + 40, v:v + 34] for u in range(9)
                  for v in range(7))
        np.testing.assert_allclose(out[b].numpy(), ref, atol=1e-12)
