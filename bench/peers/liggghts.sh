#!/usr/bin/env bash
# The peer in the same run (issue 27): LIGGGHTS 3.8 (Debian's package) with 1 and 2 MPI
# ranks, and varidem's CPU backend and GPU backend (f32), alternating on the same
# settled poured bed (`varidem bench --workload poured-bed`), with the same materials,
# walls and time step. Prints each round's particle-steps/s, each pair's ratio
# (varidem / LIGGGHTS with 2 ranks) and the medians, after a physics check: the contact
# count and the kinetic energy of both codes after the same steps from the same state.
#
# Usage: bench/peers/liggghts.sh [N] [STEPS] [ROUNDS]   (default 100000 400 3)
# Environment: WARMUP (untimed steps first, default 50), VARIDEM (a varidem binary; by
# default this checkout's release build), GPU=0 to leave out the GPU backend, GPU_F64=1
# to time the GPU backend in f64 too.
set -euo pipefail
cd "$(dirname "$0")/../.."

N="${1:-100000}"
STEPS="${2:-400}"
ROUNDS="${3:-3}"
WARMUP="${WARMUP:-50}"
GPU="${GPU:-1}"
GPU_F64="${GPU_F64:-0}"

if ! command -v liggghts >/dev/null || ! command -v mpirun >/dev/null; then
    echo "peers: installing LIGGGHTS and Open MPI from Debian's packages"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq liggghts openmpi-bin >/dev/null
fi
# Open MPI refuses root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -z "${VARIDEM:-}" ]; then
    cargo build --release --quiet
    VARIDEM="${CARGO_TARGET_DIR:-target}/release/varidem"
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The settled bed (poured once and cached by varidem), as LIGGGHTS input.
"$VARIDEM" bench --workload poured-bed --n "$N" --export-liggghts "$work"

# LIGGGHTS with `ranks` ranks: "rate contacts ke" of its timed run.
liggghts_run() {
    local ranks="$1" log
    log="$(cd "$work" && mpirun --oversubscribe -np "$ranks" liggghts -in in.bed \
        -var warmup "$WARMUP" -var steps "$STEPS" -echo none -log none)"
    awk -v n="$N" -v s="$STEPS" '
        /^ *Step +Atoms/ { head = 1; next }
        head && NF == 5 && $1 ~ /^[0-9]+$/ { contacts = $5; ke = $3 + $4 }
        /^Loop time of/ { t = $4 }
        END { printf "%.4e %.4f %.4e\n", n * s / t, contacts / n, ke }' <<<"$log"
}

# varidem on `backend`: "rate contacts ke".
varidem_run() {
    local out
    out="$("$VARIDEM" bench --workload poured-bed --n "$N" --steps "$STEPS" \
        --warmup "$WARMUP" --backend "$@" 2>/dev/null)"
    awk '
        /^particle-steps\/s:/ { rate = $2 }
        /^contacts per particle between spheres:/ { contacts = $NF }
        /^kinetic energy after the timed steps:/ { ke = $(NF - 1) }
        END { printf "%s %s %s\n", rate, contacts, ke }' <<<"$out"
}

echo
echo "physics check: $N spheres, $WARMUP + $STEPS steps from the same settled state"
read -r _ lc lk <<<"$(liggghts_run 1)"
read -r _ vc vk <<<"$(varidem_run cpu)"
echo "  contacts per sphere between spheres: LIGGGHTS $lc, varidem $vc"
echo "  kinetic energy (translational + rotational): LIGGGHTS $lk J, varidem $vk J"

echo
echo "timing, particle-steps/s ($ROUNDS rounds, alternating)"
runs=(lig1 lig2 cpu)
[ "$GPU" = "1" ] && runs+=(gpu)
[ "$GPU" = "1" ] && [ "$GPU_F64" = "1" ] && runs+=(gpu64)
declare -A all
for round in $(seq 1 "$ROUNDS"); do
    line="round $round:"
    declare -A rate=()
    for r in "${runs[@]}"; do
        case "$r" in
            lig1) read -r x _ _ <<<"$(liggghts_run 1)" ;;
            lig2) read -r x _ _ <<<"$(liggghts_run 2)" ;;
            cpu) read -r x _ _ <<<"$(varidem_run cpu)" ;;
            gpu) read -r x _ _ <<<"$(varidem_run gpu --precision f32)" ;;
            gpu64) read -r x _ _ <<<"$(varidem_run gpu --precision f64)" ;;
        esac
        rate[$r]="$x"
        all[$r]="${all[$r]:-} $x"
        line="$line $r $x"
    done
    for r in cpu gpu gpu64; do
        [ -n "${rate[$r]:-}" ] || continue
        ratio="$(awk -v a="${rate[$r]}" -v b="${rate[lig2]}" 'BEGIN { printf "%.2f", a / b }')"
        all[$r/lig2]="${all[$r/lig2]:-} $ratio"
        line="$line  $r/lig2 $ratio"
    done
    echo "  $line"
    unset rate
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "medians over $ROUNDS rounds:"
for key in "${runs[@]}" cpu/lig2 gpu/lig2 gpu64/lig2; do
    [ -n "${all[$key]:-}" ] || continue
    echo "  $key: $(median "${all[$key]}")  (rounds:${all[$key]})"
done
