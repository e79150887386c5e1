"""The one checkpoint format of models trained here (fine-tuned and from scratch): the writer's
key order per kind, the one reader's checks, the final model without the optimiser, and files
written before the two kinds shared a module."""

from __future__ import annotations

import pytest
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model
from vcrbench.models.checkpoints import KINDS, checkpoint_path, read_checkpoint
from vcrbench.training.checkpoint import final_checkpoint, new_checkpoint, save_checkpoint
from vcrbench.training.scratch import ScratchRecipe, new_state


def _module_and_optimizer():
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)
    module(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    return module, optimizer


FIELDS = {
    "finetuned": {"name": "ft", "base": "efficientnet-lite0", "spec": {"lr": 0.1}, "epoch": 2},
    "trained": {"recipe": {"architecture": "fastnet"}, "epoch": 2, "log": [{"epoch": 1}],
                "data": {"side": 32}},
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_both_kinds_are_written_in_their_key_order_and_read_by_one_reader(kind, tmp_path):
    module, optimizer = _module_and_optimizer()
    checkpoint = new_checkpoint(kind, module.state_dict(), optimizer.state_dict(),
                                **FIELDS[kind])
    expected = ["format", "version", *KINDS[kind].keys, "optimizer"]
    assert list(checkpoint) == expected
    save_checkpoint(checkpoint, tmp_path / "epoch.pt")
    save_checkpoint(final_checkpoint(checkpoint), tmp_path / "final.pt")
    read = read_checkpoint(tmp_path / "epoch.pt", kind)
    assert list(read) == expected and read["format"] == KINDS[kind].format
    assert all(torch.equal(read["state_dict"][k], v) for k, v in module.state_dict().items())
    state = read["optimizer"]["state"][0]["momentum_buffer"]
    assert torch.equal(state, optimizer.state_dict()["state"][0]["momentum_buffer"])
    assert list(read_checkpoint(tmp_path / "final.pt", kind)) == expected[:-1]
    other = next(k for k in KINDS if k != kind)
    with pytest.raises(VcrbenchError, match=f"not a vcrbench {KINDS[other].what} checkpoint"):
        read_checkpoint(tmp_path / "epoch.pt", other)


def test_the_writer_takes_exactly_the_kinds_keys():
    module, _ = _module_and_optimizer()
    with pytest.raises(VcrbenchError, match="has the keys"):
        new_checkpoint("finetuned", module.state_dict(), name="ft", epoch=1)
    with pytest.raises(VcrbenchError, match="kind 'other'"):
        new_checkpoint("other", module.state_dict())


def test_damaged_old_and_incomplete_files_are_clear_errors(tmp_path):
    path = tmp_path / "x.pt"
    path.write_bytes(b"truncated")
    with pytest.raises(VcrbenchError, match="not a readable vcrbench checkpoint"):
        read_checkpoint(path, "trained")
    torch.save({"format": "vcrbench-scratch", "version": 2, "recipe": {}, "epoch": 1,
                "state_dict": {}}, path)
    with pytest.raises(VcrbenchError, match="version 2 is not 1"):
        read_checkpoint(path, "trained")
    torch.save({"format": "vcrbench-finetuned", "version": 1, "name": "a", "epoch": 1,
                "state_dict": {}}, path)
    with pytest.raises(VcrbenchError, match=r"lacks \['base', 'spec'\]"):
        read_checkpoint(path, "finetuned")


def test_a_trained_model_written_before_data_and_log_existed_still_loads(tmp_path):
    """A from-scratch file as the first version wrote it (no ``data``, no ``log``): read as a
    32 px model."""
    recipe = ScratchRecipe(architecture="fastnet", classes=3)
    model = new_state(recipe).model
    torch.save({"format": "vcrbench-scratch", "version": 1, "recipe": recipe.as_dict(),
                "epoch": 4, "state_dict": model.state_dict()}, tmp_path / "model.pt")
    loaded = load_model(f"trained:{tmp_path / 'model.pt'}")
    assert loaded.classes == 3 and loaded.preprocessing.input_size == 32
    assert checkpoint_path(str(tmp_path / "model.pt"), None, "trained") == tmp_path / "model.pt"
