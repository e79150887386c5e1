"""Seeded random initialisation: the same model string gives the same weights in two processes,
another seed or architecture other weights, and nothing outside the construction changes."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model, parse_model_name, predict
from vcrbench.models.random_init import init_seed, seeded_construction

#: Prints the SHA-256 of a model's state dict and its top-1 on fixed images, in a new process.
_DIGEST = textwrap.dedent("""
    import hashlib, sys
    import numpy as np, torch
    from vcrbench.models import load_model, predict
    torch.manual_seed(int(sys.argv[2]))      # the process's own global state must not matter
    model = load_model(sys.argv[1])
    h = hashlib.sha256()
    for name, tensor in sorted(model.module.state_dict().items()):
        h.update(name.encode()); h.update(tensor.detach().contiguous().numpy().tobytes())
    images = np.random.default_rng(0).integers(0, 256, (4, 64, 64, 3), dtype=np.uint8)
    top1 = predict(model, images, batch_size=4)["top1"]
    print(h.hexdigest(), ",".join(map(str, top1)))
""")


def _in_process(name: str, global_seed: int) -> str:
    result = subprocess.run([sys.executable, "-c", _DIGEST, name, str(global_seed)],
                            capture_output=True, text=True, timeout=300, check=True)
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("name", ["torchvision:resnet18?weights=none",
                                  "timm:resnet18?pretrained=false"])
def test_two_processes_build_the_same_network(name: str) -> None:
    first, second = _in_process(name, 1), _in_process(name, 2)
    assert first == second
    # the same predictions on the same images: clean and corrupted come from one network
    assert first.split()[1] == second.split()[1]


def _digest(model) -> str:
    h = hashlib.sha256()
    for name, tensor in sorted(model.module.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def test_seed_option_and_architecture_change_the_weights() -> None:
    base = _digest(load_model("torchvision:resnet18?weights=none"))
    assert _digest(load_model("torchvision:resnet18?weights=none&seed=0")) == base
    assert _digest(load_model("torchvision:resnet18?weights=none&seed=1")) != base
    assert init_seed("torchvision", "resnet18") != init_seed("timm", "resnet18")
    assert init_seed("torchvision", "resnet18") != init_seed("torchvision", "resnet34")


def test_construction_leaves_global_generators_alone() -> None:
    torch.manual_seed(5)
    random.seed(5)
    np.random.seed(5)
    expected = (torch.rand(3), random.random(), np.random.random())
    torch.manual_seed(5)
    random.seed(5)
    np.random.seed(5)
    with seeded_construction(123):
        torch.rand(10), random.random(), np.random.random()
    after = (torch.rand(3), random.random(), np.random.random())
    assert torch.equal(after[0], expected[0]) and after[1:] == expected[1:]


def test_seed_is_the_documented_hash() -> None:
    digest = hashlib.sha256(b"timm:resnet18#3").digest()
    assert init_seed("timm", "resnet18", 3) == int.from_bytes(digest[:8], "little") >> 1


def test_file_model_initialised_at_random_is_seeded(tmp_path) -> None:
    path = tmp_path / "random_model.py"
    path.write_text("import torch\nmodel = torch.nn.Conv2d(3, 1000, 1)\n"
                    "def preprocess(x):\n    return x\n")

    first = load_model(f"file:{path}").module.weight.detach().clone()
    torch.manual_seed(99)
    second = load_model(f"file:{path}").module.weight.detach()
    assert torch.equal(first, second)


@pytest.mark.parametrize("name,fragment", [
    ("torchvision:resnet18?weights=none&seed=-1", "non-negative integer"),
    ("torchvision:resnet18?seed=2", "add weights=none"),
    ("timm:resnet18?seed=2", "add pretrained=false"),
])
def test_bad_seed_options(name: str, fragment: str) -> None:
    with pytest.raises(VcrbenchError, match=fragment):
        parse_model_name(name)


def test_clean_and_corrupted_predictions_agree_at_zero_change() -> None:
    """Two loads (two jobs) of a random model classify the same images alike: consistency 1 at
    Δv = 0, where unseeded weights gave about chance."""
    images = np.random.default_rng(1).integers(0, 256, (8, 64, 64, 3), dtype=np.uint8)
    first = predict(load_model("timm:resnet18?pretrained=false"), images, batch_size=8)
    second = predict(load_model("timm:resnet18?pretrained=false"), images, batch_size=8)
    np.testing.assert_array_equal(first["top1"], second["top1"])
