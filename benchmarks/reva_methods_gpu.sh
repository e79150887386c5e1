#!/usr/bin/env bash
# REVa's part 2 on CIFAR-10 on one GPU (the REVa paper, Tables 2(a) and 3): Standard, AugMix,
# REVa- and REVa trained from scratch with the same recipe and budget, as processes sharing the
# GPU (bench_cifar_train.py each; AugMix's CIFAR recipe, bf16 autocast):
#   1. Standard and AugMix start together;
#   2. when Standard is done, the PGD counterparts of the training images are crafted on it once
#      (eps 8/255, step 2/255, 40 steps) and copied to REVa's folder;
#   3. REVa- and REVa start together (REVa adds TARGETED to AugMix's operations at CIFAR-10-C
#      severity 3; default: the paper's AllConvNet groups on CIFAR-10, its Table 1's worst per
#      category: frost, contrast, glass blur, Gaussian noise).
# The AugMix views of AugMix, REVa- and REVa are made on the CPU by VIEW_WORKERS processes each
# (default 4; 0: on the GPU in the training process, several times slower: docs/cifar.md).
# Each run writes OUT/<method>/{log.csv,model.pt} and OUT/<method>.log (JSON lines: per-epoch
# training seconds, loss, accuracy; the summary last). DEADLINE_S > 0 stops every run before an
# epoch that would end after DEADLINE_S seconds from this script's start (state saved, no
# model.pt: a cut cosine schedule is not the recipe). Evaluate the models afterwards with
# vcrbench cifar-c (CIFAR-10-C-style errors and PGD, paired against Standard).
#
#   benchmarks/reva_methods_gpu.sh OUT [EPOCHS=100] [ARCH=allconvnet-augmix] \
#       [DATA=.device/cifar10.cifarpack.npz] [DEADLINE_S=0]
set -euo pipefail
out=${1:?usage: $0 OUT [EPOCHS] [ARCH] [DATA] [DEADLINE_S]}
epochs=${2:-100}
arch=${3:-allconvnet-augmix}
data=${4:-.device/cifar10.cifarpack.npz}
deadline=${5:-0}
targeted=${TARGETED:-frost,contrast,glass_blur,gaussian_noise}
device=${DEVICE:-cuda}
threads=${THREADS:-4}
view_workers=${VIEW_WORKERS:-4}
case "$epochs$deadline" in
    *[!0-9]*) echo "EPOCHS and DEADLINE_S must be whole numbers" >&2; exit 2 ;;
esac
start=$(date +%s)
mkdir -p "$out"
here=$(dirname "$0")
common=(--arch "$arch" --recipe augmix --epochs "$epochs" --device "$device" --precision bf16
        --data "$data" --eval-every 5 --threads "$threads")

left() {  # the --deadline of a run started now (at least 1 s: 0 would mean none)
    if [ "$deadline" -gt 0 ]; then
        local seconds=$((deadline - $(date +%s) + start))
        echo "--deadline $((seconds > 0 ? seconds : 1))"
    fi
}
train() {  # METHOD FOLDER [ARGS...]: one training in the background, its output in FOLDER.log
    local method=$1 folder=$2
    shift 2
    # shellcheck disable=SC2046
    python3 "$here/bench_cifar_train.py" "${common[@]}" --method "$method" --out "$out/$folder" \
        $(left) "$@" >"$out/$folder.log" 2>&1 &
}

train standard standard
standard=$!
train augmix augmix --view-workers "$view_workers"
augmix=$!
wait "$standard" || true
if [ ! -f "$out/standard/model.pt" ]; then
    echo "Standard did not finish (see $out/standard.log): no REVa- / REVa" >&2
    wait "$augmix" || true
    exit 1
fi
if ! python3 "$here/bench_cifar_train.py" "${common[@]}" --method reva_minus --craft-only \
        --standard "$out/standard/model.pt" --out "$out/reva-minus" >"$out/craft.log" 2>&1; then
    echo "crafting the counterparts failed (see $out/craft.log): no REVa- / REVa" >&2
    wait "$augmix" || true
    exit 1
fi
mkdir -p "$out/reva"
cp "$out"/reva-minus/counterparts-*.npy "$out/reva/"
train reva_minus reva-minus --standard "$out/standard/model.pt" --view-workers "$view_workers"
minus=$!
train reva reva --standard "$out/standard/model.pt" --targeted "$targeted" --severity 3 \
    --view-workers "$view_workers"
reva=$!
failed=0
for pid in "$augmix" "$minus" "$reva"; do
    wait "$pid" || failed=1
done
for method in standard augmix reva-minus reva; do
    echo "$method: $(tail -n 1 "$out/$method.log")"
done
echo "total_s: $(($(date +%s) - start))"
exit "$failed"
