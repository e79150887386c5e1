"""Keyed randomness: every random draw of a run comes from a named stream keyed by the run seed.

Nothing here touches global random state, so results do not depend on shard size, job order,
batch composition, the number of cores or the machine. Keys are numpy ``SeedSequence``\\ s
whose entropy is the run seed's two 32-bit words, then the 32-bit words of the SHA-256 digest
of each name (stable across Python runs, unlike ``hash``), then the stream's salt; a
``spawn_key`` tells the items of a stream apart (sample id, epoch, …).

The streams (adding one never shifts another):

- :data:`SAMPLE`, keyed by the corruption (or ``human-<experiment>-<condition>`` for the noise
  of a human stimulus), item ``(sample_id, sub)``: sub 0 the corruption parameters, 1 the pixel
  noise.
- :data:`IMAGE_ORDER`, keyed by the corruption (or ``human-stimuli``): which image each sample
  id gets.
- :data:`CURVE_BOOTSTRAP`, keyed by model (or ``human``), corruption, metric and classes: the
  bootstrap of one fitted curve.
- :data:`TRIAL_DV`, keyed by ``<experiment>-<condition>``: the Δv given to each human trial.
- the cluster bootstrap's unit weights (:mod:`vcrbench.curves.resampling`): Poisson(1) draws
  from SHA-256 words of ``(seed, namespace/factor, unit name)`` and the replicate number, so that
  one image has one weight per replicate in every table of a run.
- :data:`FINETUNE`, keyed by ``finetune/<entry>``, item ``(epoch, sub, …)``: sub 0 the batch
  order, 1 the augmentation parameters, 2 their pixel noise, 3 dropout, 4 the AugMix draws of
  one view of one image (item ``(epoch, 4, position, view)``).
- :data:`ATTACK`, keyed by the attack's name and the image: the random start of an adversarial
  attack (PGD's uniform, R-FGSM's normal draws), the same whatever the batch.

:data:`CURVE_BOOTSTRAP` and :data:`TRIAL_DV` take only the seed's low 32-bit word (their
original layout, kept so that results do not change); seeds that differ only above bit 31
share those two streams.

No torch here: statistics jobs import this module without loading torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

#: Sub-streams of one sample's key (``SAMPLE``): each consumer takes its own.
PARAMETER_STREAM = 0
NOISE_STREAM = 1
#: Sub-streams of one fine-tuning epoch's key (``FINETUNE``).
EPOCH_ORDER, EPOCH_PARAMETERS, EPOCH_NOISE, EPOCH_DROPOUT, EPOCH_AUGMIX = range(5)
#: ... the crop and flip of a training image, and of its PGD counterpart when drawn apart.
EPOCH_GEOMETRY, EPOCH_ADVERSARIAL_GEOMETRY = 5, 6


def name_words(name: str) -> list[int]:
    """Stable 32-bit words for a string (first 128 bits of its SHA-256)."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()[:16]
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


@dataclass(frozen=True)
class Stream:
    """A named keyed stream.

    Attributes:
        name: what the stream draws (documentation only; not part of the key).
        salt: a last entropy word that keeps the stream apart from others keyed by the same
            names, or None.
        seed_high_word: whether the seed's high 32-bit word is part of the key.
    """

    name: str
    salt: int | None = None
    seed_high_word: bool = True

    def key(self, seed: int, *names: str, spawn: tuple[int, ...] = ()) -> np.random.SeedSequence:
        """The seed sequence of ``(seed, names…)``, item ``spawn`` of the stream."""
        seed = int(seed)
        if seed < 0 or any(int(s) < 0 for s in spawn):
            raise ValueError("seeds and spawn keys must be non-negative integers")
        entropy = [seed & 0xFFFFFFFF]
        if self.seed_high_word:
            entropy.append(seed >> 32)
        for name in names:
            entropy.extend(name_words(name))
        if self.salt is not None:
            entropy.append(self.salt)
        return np.random.SeedSequence(entropy, spawn_key=tuple(int(s) for s in spawn))

    def rng(self, seed: int, *names: str, spawn: tuple[int, ...] = ()) -> np.random.Generator:
        """A numpy generator on :meth:`key`."""
        return np.random.default_rng(self.key(seed, *names, spawn=spawn))


SAMPLE = Stream("parameters, pixel noise and bootstrap of one sample")
IMAGE_ORDER = Stream("which image each sample id gets", salt=0x1A6E)
CURVE_BOOTSTRAP = Stream("the bootstrap of one fitted curve", seed_high_word=False)
TRIAL_DV = Stream("the Δv assigned to the human trials of one condition", salt=0x4D0,
                  seed_high_word=False)
FINETUNE = Stream("batch order, augmentation and dropout of one fine-tuning epoch")
ATTACK = Stream("the random start of an adversarial attack on one image", salt=0xA77AC)


def sample_key(seed: int, corruption: str, sample_id: int, stream: int) -> np.random.SeedSequence:
    """The seed sequence of sub-stream ``stream`` of one sample: ``(seed, corruption,
    sample_id, stream)``."""
    return SAMPLE.key(seed, corruption, spawn=(sample_id, stream))


def parameter_rng(seed: int, corruption: str, sample_id: int) -> np.random.Generator:
    """numpy generator for the corruption parameters of one sample."""
    return np.random.default_rng(sample_key(seed, corruption, sample_id, PARAMETER_STREAM))


def seed_of(key: np.random.SeedSequence) -> int:
    """A 63-bit integer seed drawn from a seed sequence (fits an int64 column)."""
    state = key.generate_state(2, np.uint32)
    return int((int(state[0]) | (int(state[1]) << 32)) & 0x7FFF_FFFF_FFFF_FFFF)


def noise_seed(seed: int, corruption: str, sample_id: int) -> int:
    """A 63-bit integer seed for the pixel noise of one sample (stored in the samples table)."""
    return seed_of(sample_key(seed, corruption, sample_id, NOISE_STREAM))


def curve_bootstrap_seed(seed: int, *names: str) -> int:
    """The 32-bit bootstrap seed of one curve, keyed by the run seed and names (model,
    corruption, metric, classes)."""
    return int(CURVE_BOOTSTRAP.key(seed, *names).generate_state(1, np.uint32)[0])
