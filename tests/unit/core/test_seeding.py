"""Keyed randomness: every named stream reproduces, number for number, the key the code used
before the streams were named (written out here as it was), and streams stay apart."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from vcrbench.core import seeding
from vcrbench.core.seeding import (
    CURVE_BOOTSTRAP,
    EPOCH_DROPOUT,
    EPOCH_NOISE,
    EPOCH_ORDER,
    EPOCH_PARAMETERS,
    FINETUNE,
    IMAGE_ORDER,
    NOISE_STREAM,
    PARAMETER_STREAM,
    SAMPLE,
    TRIAL_DV,
)

SEEDS = [0, 7, 2**31 + 5, 2**40 + 3]


def words(name: str) -> list[int]:
    digest = hashlib.sha256(name.encode("utf-8")).digest()[:16]
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def state(key: np.random.SeedSequence) -> list[int]:
    return key.generate_state(4, np.uint32).tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_sample_streams_are_the_original_keys(seed):
    for sample_id, stream in [(0, PARAMETER_STREAM), (5, NOISE_STREAM), (123, 2)]:
        old = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, *words("frost")],
                                     spawn_key=(sample_id, stream))
        assert state(seeding.sample_key(seed, "frost", sample_id, stream)) == state(old)
    old_noise = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, *words("frost")],
                                       spawn_key=(9, 1)).generate_state(2, np.uint32)
    expected = int((int(old_noise[0]) | (int(old_noise[1]) << 32)) & 0x7FFF_FFFF_FFFF_FFFF)
    assert seeding.noise_seed(seed, "frost", 9) == expected


@pytest.mark.parametrize("seed", SEEDS)
def test_named_streams_are_the_original_keys(seed):
    lo, hi = seed & 0xFFFFFFFF, seed >> 32
    # the image order of samples.image_order (salt 0x1A6E)
    old = np.random.SeedSequence([lo, hi, *words("gaussian_blur"), 0x1A6E])
    assert state(IMAGE_ORDER.key(seed, "gaussian_blur")) == state(old)
    # a curve's bootstrap seed (estimation.property_seed: low word only, no salt)
    old_words = [lo]
    for name in ("efficientnet-lite0", "frost", "accuracy", "16"):
        old_words.extend(words(name))
    old_seed = int(np.random.SeedSequence(old_words).generate_state(1, np.uint32)[0])
    assert seeding.curve_bootstrap_seed(seed, "efficientnet-lite0", "frost", "accuracy",
                                        "16") == old_seed
    # Δv of human trials (human_stimuli.assign_dv: low word only, salt 0x4D0)
    old = np.random.SeedSequence([lo, *words("low-pass-3.0"), 0x4D0])
    assert state(TRIAL_DV.key(seed, "low-pass-3.0")) == state(old)
    # a fine-tuning epoch (finetune._epoch_key)
    for sub in (EPOCH_ORDER, EPOCH_PARAMETERS, EPOCH_NOISE, EPOCH_DROPOUT):
        old = np.random.SeedSequence([lo, hi, *words("finetune/ft")], spawn_key=(3, sub, 11))
        assert state(FINETUNE.key(seed, "finetune/ft", spawn=(3, sub, 11))) == state(old)


def test_streams_keyed_by_the_same_name_differ():
    keys = [state(s.key(3, "frost")) for s in (SAMPLE, IMAGE_ORDER, CURVE_BOOTSTRAP, TRIAL_DV)]
    assert len({tuple(k) for k in keys}) == len(keys)


def test_negative_seeds_and_spawn_keys_are_refused():
    with pytest.raises(ValueError):
        SAMPLE.key(-1, "frost")
    with pytest.raises(ValueError):
        seeding.sample_key(0, "frost", -1, 0)
