"""Scored shards with and without pixels: the same samples, the same images to every model."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.data.datasets import IMAGE_SIZE
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.predictions import predict_scored
from vcrbench.evaluation.samples import make_samples
from vcrbench.evaluation.scoring import (
    SCORED_SCHEMA_NO_PIXELS,
    decode_images,
    pixel_checksum,
    regenerate_images,
    score_shard,
    stores_images,
)


class ArrayImages:
    """Clean images held in memory, with the store's reading interface."""

    def __init__(self, images: dict[str, np.ndarray]):
        self._images = images

    def __contains__(self, image_id):
        return image_id in self._images

    def images(self, image_ids):
        return np.stack([self._images[i] for i in image_ids])


class MeanColour:
    """A stand-in for a model's inference: the decision is the image's mean grey level."""

    def decisions(self, images):
        mean = images.reshape(len(images), -1).mean(axis=1)
        return {"top1": pa.array(mean.astype(np.int16)), "p_top1": pa.array(mean / 255)}

    def streamed_decisions(self, chunks, total):
        images = np.concatenate(list(chunks))
        assert len(images) == total
        return self.decisions(images)


@pytest.fixture(scope="module")
def shard():
    rng = np.random.default_rng(1)
    clean = ArrayImages({f"img{i}": rng.integers(0, 256, (IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
                         for i in range(3)})
    samples = make_samples(["img0", "img1", "img2"], "gaussian_noise", seed=5, mode="uniform",
                           n=7, shard_size=7, shard=0)
    return samples, clean


def test_without_pixels_only_the_image_column_goes(shard):
    samples, clean = shard
    with_pixels = score_shard(samples, clean, batch_size=3)
    without = score_shard(samples, clean, batch_size=3, store_images=False)
    assert without.schema == SCORED_SCHEMA_NO_PIXELS
    assert without.equals(with_pixels.drop_columns(["image"]))


def test_each_sample_is_scored_against_its_own_clean_image(shard, monkeypatch):
    # the shard's VIF shares each clean image's work among its samples (VIF_BLOCK at a time):
    # every value must be the pair's own VIF, whatever the block boundaries
    import vcrbench.evaluation.scoring as scoring
    from vcrbench.vif import vif

    samples, clean = shard
    scored = score_shard(samples, clean, batch_size=3)
    ids = scored.column("image_id").to_pylist()
    refs = clean.images(ids).transpose(0, 3, 1, 2)
    dists = decode_images(scored.column("image")).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(scored.column("vif").to_numpy(), vif(refs, dists),
                               rtol=0, atol=1e-12)
    monkeypatch.setattr(scoring, "VIF_BLOCK", 2)  # blocks of 3 samples: batch by batch
    small_blocks = score_shard(samples, clean, batch_size=3)
    np.testing.assert_allclose(small_blocks.column("vif").to_numpy(),
                               scored.column("vif").to_numpy(), rtol=0, atol=1e-12)
    assert small_blocks.column("checksum").equals(scored.column("checksum"))


def test_regenerated_images_are_the_scored_ones(shard):
    samples, clean = shard
    scored = score_shard(samples, clean, batch_size=3)
    stored = decode_images(scored.column("image"))
    without = scored.drop_columns(["image"])
    for batch_size in (1, 5):
        assert np.array_equal(
            regenerate_images(without, samples, clean, batch_size=batch_size), stored)
    assert predict_scored(without, MeanColour(), samples=samples, clean=clean).equals(
        predict_scored(scored, MeanColour()))


def test_a_regenerated_image_that_differs_is_an_error(shard):
    samples, clean = shard
    scored = score_shard(samples, clean, store_images=False)
    checksums = scored.column("checksum").to_pylist()
    checksums[4] = pixel_checksum(np.zeros((IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8))
    tampered = scored.set_column(4, "checksum", pa.array(checksums, pa.string()))
    with pytest.raises(VcrbenchError, match="differs from the one that was scored"):
        regenerate_images(tampered, samples, clean)
    with pytest.raises(VcrbenchError, match="different samples"):
        regenerate_images(scored, samples.slice(1), clean)
    with pytest.raises(VcrbenchError, match="without pixels"):
        predict_scored(scored, MeanColour())


def test_auto_stores_pixels_up_to_one_gigabyte():
    per_image = IMAGE_SIZE * IMAGE_SIZE * 3
    assert stores_images("auto", 10**9 // per_image)
    assert not stores_images("auto", 10**9 // per_image + 1)
    assert stores_images(True, 10**9) and not stores_images(False, 1)
    with pytest.raises(VcrbenchError, match="store_images"):
        stores_images("sometimes", 1)


def test_imagenet_c_samples_can_be_re_saved_as_jpeg(shard):
    """imagenet_c.jpeg_quality: the shard carries the quality, every corrupted image is the
    corruption's output encoded as a Pillow JPEG of that quality and decoded again (as the
    published ImageNet-C), scoring and regeneration agree; without it nothing changes."""
    import io

    from PIL import Image

    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.evaluation.samples import FIXED_COLUMNS, parameter_columns

    _, clean = shard
    ids = ["img0", "img1", "img2"]
    plain = make_samples(ids, "gaussian_blur", seed=5, mode="imagenet-c", n=10, shard_size=10,
                         shard=0)
    assert plain.column_names == [*FIXED_COLUMNS, "sigma"]
    resaved = make_samples(ids, "gaussian_blur", seed=5, mode="imagenet-c", n=10, shard_size=10,
                           shard=0, jpeg_quality=85)
    assert resaved.drop_columns(["jpeg_quality"]).equals(plain)
    assert parameter_columns(resaved) == ["sigma"]
    assert set(resaved.column("jpeg_quality").to_pylist()) == {85}
    with pytest.raises(VcrbenchError, match="jpeg_quality"):
        make_samples(ids, "gaussian_blur", seed=5, mode="uniform", n=10, shard_size=10, shard=0,
                     jpeg_quality=85)

    images = clean.images(plain.column("image_id").to_pylist())
    corrupted = corrupt_uint8("gaussian_blur", images,
                              {"sigma": plain.column("sigma").to_numpy()},
                              plain.column("seed").to_numpy(), "cpu")
    expected = []
    for image in corrupted:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="JPEG", quality=85)
        expected.append(np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")))
    scored = score_shard(resaved, clean, batch_size=4)
    np.testing.assert_array_equal(decode_images(scored.column("image")), np.stack(expected))
    assert not np.array_equal(np.stack(expected), corrupted)
    without = score_shard(resaved, clean, batch_size=4, store_images=False)
    np.testing.assert_array_equal(regenerate_images(without, resaved, clean, batch_size=3),
                                  np.stack(expected))
    # the default: the corruption's own bytes
    np.testing.assert_array_equal(decode_images(score_shard(plain, clean).column("image")),
                                  corrupted)
