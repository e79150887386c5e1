"""Pack CIFAR-10's class-folder copy to travel to a benchmark machine without ``../shared``, or
unfold a pack back into class folders (:mod:`vcrbench.data.cifar_pack`, where the benchmarks'
``load`` lives)::

    python benchmarks/cifar_data.py pack ../shared/data/cifar10 .device/cifar10.cifarpack.npz
    python benchmarks/cifar_data.py unfold .device/cifar10.cifarpack.npz ../shared/data/cifar10
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vcrbench.data.cifar_pack import pack, unfold

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Pack a CIFAR class-folder copy to travel, "
                                     "or unfold a pack back into class folders.")
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="write SOURCE's images as a .cifarpack.npz")
    packing.add_argument("source", type=Path, help="a class-folder copy (train/, test/)")
    packing.add_argument("out", type=Path, help="the packed file (OUT.cifarpack.npz)")
    unfolding = commands.add_parser("unfold", help="write a pack's images as class folders")
    unfolding.add_argument("pack", type=Path, help="a .cifarpack.npz")
    unfolding.add_argument("folder", type=Path, help="where train/ and test/ are written")
    args = parser.parse_args()
    if args.command == "pack":
        pack(args.source, args.out)
    else:
        print(f"{unfold(args.pack, args.folder)} files")
