#!/usr/bin/env bash
# The prepared real-GPU benchmark and parity run (issue 43). Wherever a Vulkan adapter
# and the folder made by bench/device-prepare.sh exist, it writes into OUT_DIR:
#   info.txt     `varidem info`: the adapters and their limits (and nvidia-smi -L);
#   parity.txt   GPU f64 against the CPU backend and two GPU f32 runs against each
#                other on short runs of five scenes, ending `parity: ok|FAILED`;
#   results.csv  `varidem bench` rates: workload,backend,precision,n,particle_steps_per_s,...
#   results.md   the same as tables with GPU/CPU ratios, kernel paths, GPU time per
#                kernel family, and the date;
#   log.txt      every command with its output.
# Every step has a time budget (`timeout`), and one that would not fit in what is
# left of the whole script's budget is skipped with a line saying so: the script
# stays under DEVICE_BUDGET seconds (480 on a GPU; 900 in quick mode).
#
# Usage: bench/device.sh OUT_DIR   (exit 2 when the parity check failed)
# Environment: VARIDEM_DEVICE_BUNDLE (the prepared folder, default .device-bundle),
# VARIDEM (a varidem binary; default the bundle's), VARIDEM_DEVICE_QUICK=1 (every N
# shrunk so that the whole script runs in 15 minutes on lavapipe: the same code path,
# which is how it is tested), DEVICE_BUDGET (seconds).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT="${1:?usage: bench/device.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BUNDLE="${VARIDEM_DEVICE_BUNDLE:-.device-bundle}"
QUICK="${VARIDEM_DEVICE_QUICK:-0}"
START=$(date +%s)
if [ "$QUICK" = "1" ]; then
    BUDGET="${DEVICE_BUDGET:-900}"
else
    BUDGET="${DEVICE_BUDGET:-480}"
fi
LOG="$OUT/log.txt"
: >"$LOG"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export RUST_LOG="${RUST_LOG:-warn}"

note() { echo "$*" | tee -a "$LOG"; }

# The Vulkan loader: the machine's, else the packages the bundle carries (unpacked
# into /, as root on a bare machine).
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
    if ls "$BUNDLE"/gl/*.deb >/dev/null 2>&1; then
        note "device: no Vulkan loader; unpacking the bundle's $(ls "$BUNDLE"/gl/*.deb | wc -l) packages"
        for f in "$BUNDLE"/gl/*.deb; do dpkg -x "$f" / >>"$LOG" 2>&1; done
        ldconfig
    else
        note "device: no Vulkan loader and none in $BUNDLE/gl"
    fi
fi
# NVIDIA's driver files where the image mounts them, if no ICD is registered.
if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
        if [ -f "$icd" ]; then
            export VK_DRIVER_FILES="$icd"
            note "device: VK_DRIVER_FILES=$icd"
            break
        fi
    done
fi

VARIDEM="${VARIDEM:-$BUNDLE/varidem}"
if [ ! -x "$VARIDEM" ]; then
    VARIDEM="${CARGO_TARGET_DIR:-target}/release/varidem"
fi
if [ ! -x "$VARIDEM" ]; then
    note "device: no varidem binary (run bench/device-prepare.sh DIR first)"
    exit 1
fi
# The settled beds, copied where the benchmark may write its cache.
CACHE="$(mktemp -d)"
trap 'rm -rf "$CACHE"' EXIT
cp "$BUNDLE"/cache/*.ckpt "$CACHE"/ 2>/dev/null || note "device: no settled beds in $BUNDLE/cache: the poured bed will be poured here"
export VARIDEM_CACHE_DIR="$CACHE"

left() { echo $((BUDGET - ($(date +%s) - START))); }

# step NAME BUDGET COMMAND...: runs COMMAND with its output in $STEP_OUT (and the log),
# under `timeout BUDGET`, unless fewer than BUDGET seconds are left. Returns 0 on
# success, 124 when it ran out of its budget, 125 when skipped, else its status.
STEP_OUT=""
step() {
    local name="$1" budget="$2"
    shift 2
    STEP_OUT=""
    if [ "$(left)" -lt "$budget" ]; then
        note "skipped: $name (budget $budget s, $(left) s left of $BUDGET s)"
        return 125
    fi
    echo "\$ $*" >>"$LOG"
    local t0=$(date +%s)
    STEP_OUT="$(timeout -k 5 "$budget" "$@" 2>&1)"
    local rc=$?
    echo "$STEP_OUT" >>"$LOG"
    echo "(rc $rc, $(($(date +%s) - t0)) s)" >>"$LOG"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        note "skipped: $name exceeded its budget of $budget s and was stopped"
        return 124
    fi
    return $rc
}

# ---- info.txt ------------------------------------------------------------------
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "quick mode: $QUICK"
    echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1
    "$VARIDEM" --version 2>&1
    timeout 60 "$VARIDEM" info 2>&1
} >"$OUT/info.txt"
cat "$OUT/info.txt" >>"$LOG"

# ---- parity.txt ----------------------------------------------------------------
# maxrel A B: the largest difference between two final.csv files over every state
# column, relative to that column's largest magnitude in A; "rows" if they differ in
# shape.
maxrel() {
    awk -F, 'NR == FNR { if (FNR > 1) for (c = 2; c <= NF; c++) a[FNR, c] = $c; na = FNR; nc = NF; next }
        FNR > 1 { nb = FNR; for (c = 2; c <= NF; c++) {
            x = a[FNR, c] + 0; y = $c + 0; d = x - y; if (d < 0) d = -d; if (x < 0) x = -x
            if (d > dmax[c]) dmax[c] = d; if (x > amax[c]) amax[c] = x } }
        END { if (na != nb) { print "rows"; exit }
            m = 0; for (c = 2; c <= nc; c++) { s = amax[c] > 0 ? dmax[c] / amax[c] : dmax[c]; if (s > m) m = s }
            printf "%.3e\n", m }' "$1" "$2"
}

if [ "$QUICK" = "1" ]; then
    PARITY=("torus-impact 300" "pour 1500" "clump-pour 400" "hard-pile 200" "hopper 300" "channel-small 100")
else
    PARITY=("torus-impact 1000" "pour 6000" "clump-pour 2000" "hard-pile 500" "hopper 2000" "channel-small 1000")
fi
# Tolerance of GPU f64 against the CPU: README's claim (≤ 1e-10, often bitwise).
TOL=1e-10
parity_ok=1
work="$(mktemp -d)"
{
    echo "parity: GPU f64 against the CPU backend (largest difference over x, v, α, Ω relative to each column's largest value; tolerance $TOL), and two GPU f32 runs (bitwise); final.csv after S steps"
} >"$OUT/parity.txt"
for entry in "${PARITY[@]}"; do
    read -r scene steps <<<"$entry"
    path="scenes/$scene.toml"
    if grep -q '^solver = "nbgs"' "$path" && ! grep -q '^file' "$path"; then
        # NBGS is sequential (CPU only): both backends take the colored solver.
        sed 's/^solver = "nbgs"/solver = "colored"/' "$path" >"$work/$scene.toml"
        path="$work/$scene.toml"
    fi
    runs=(cpu "--backend cpu" f64 "--backend gpu --precision f64" f32a "--backend gpu --precision f32" f32b "--backend gpu --precision f32")
    failed=""
    for ((k = 0; k < ${#runs[@]}; k += 2)); do
        tag="${runs[k]}"
        # shellcheck disable=SC2086
        if ! step "parity $scene $tag" 120 "$VARIDEM" run "$path" --steps "$steps" \
            --out "$work/$scene-$tag" --no-vtk --quiet ${runs[k + 1]}; then
            failed="$failed $tag"
        elif [ "$tag" != cpu ] && ! grep -q '^backend = "gpu' "$work/$scene-$tag/run.toml"; then
            # `run` falls back to the CPU when the GPU backend cannot be set up.
            note "parity $scene $tag: ran on $(grep -m1 '^backend' "$work/$scene-$tag/run.toml"), not the GPU"
            failed="$failed $tag"
        fi
    done
    for prec in f64 f32; do
        if [ "$prec" = f64 ]; then
            if [[ " $failed " == *" cpu "* || " $failed " == *" f64 "* ]]; then
                line="$scene f64, $steps steps: FAILED (a run did not finish; log.txt)"
                parity_ok=0
            else
                d="$(maxrel "$work/$scene-cpu/final.csv" "$work/$scene-f64/final.csv")"
                if [ "$d" != rows ] && awk -v d="$d" -v t="$TOL" 'BEGIN { exit !(d <= t) }'; then
                    line="$scene f64, $steps steps: $d against the CPU, ok"
                else
                    line="$scene f64, $steps steps: $d against the CPU, FAILED"
                    parity_ok=0
                fi
            fi
        else
            if [[ " $failed " == *" f32a "* || " $failed " == *" f32b "* ]]; then
                line="$scene f32, $steps steps: FAILED (a run did not finish; log.txt)"
                parity_ok=0
            elif cmp -s "$work/$scene-f32a/final.csv" "$work/$scene-f32b/final.csv"; then
                d="$(maxrel "$work/$scene-cpu/final.csv" "$work/$scene-f32a/final.csv" 2>/dev/null)"
                line="$scene f32, $steps steps: two runs bitwise identical, ok ($d against the CPU)"
            else
                line="$scene f32, $steps steps: two runs differ, FAILED"
                parity_ok=0
            fi
        fi
        note "$line"
        echo "$line" >>"$OUT/parity.txt"
    done
done
rm -rf "$work"
if [ $parity_ok = 1 ]; then
    echo "parity: ok" >>"$OUT/parity.txt"
else
    echo "parity: FAILED" >>"$OUT/parity.txt"
fi
note "$(tail -1 "$OUT/parity.txt")"

# ---- results.csv -----------------------------------------------------------------
# Sizes: 10⁴, 10⁵, 10⁶, then larger ones until one is refused or out of time. The
# poured bed is tiled from the settled 10⁴ bed (quick: 500) above its size.
if [ "$QUICK" = "1" ]; then
    SIZES=(500 2000 5000)
    LARGER=(10000 20000)
    # The hard bed's columns grow taller with N and its sweeps with them: lavapipe
    # takes about 30 s for 45 steps of 500 beads.
    HARD_SIZES=(64 128 256)
    HARD_LARGER=(512)
    BASE=500
    CPU_N=2000
    HARD_CPU_N=128
    STEPS=20
else
    SIZES=(10000 100000 1000000)
    LARGER=(10000000 30000000)
    HARD_SIZES=("${SIZES[@]}")
    HARD_LARGER=("${LARGER[@]}")
    BASE=10000
    CPU_N=100000
    HARD_CPU_N=100000
    STEPS=200
fi
WORKLOADS=(poured-bed block clump-bed hard-bed)
CSV="$OUT/results.csv"
echo "workload,backend,precision,n,particle_steps_per_s,steps,wall_s,gpu_ms_per_step,dispatches_per_step,kernel_families_ms_per_step,kernel_path,status,sort_ms" >"$CSV"

# bench WORKLOAD BACKEND PRECISION N STEPS BUDGET: one `varidem bench`, its row in
# results.csv. Returns bench's status (125: skipped, 124: out of its budget).
bench() {
    local w="$1" backend="$2" prec="$3" n="$4" steps="$5" budget="$6" extra=() workload="$1" pre=()
    case "$w" in
        poured-bed) [ "$n" -gt "$BASE" ] && extra=(--tile-from "$BASE") ;;
        # The poured bed stored in id order (issue 44): beside poured-bed, which the
        # set-up sorts along the grid's cells, what the sort and its id lookups do.
        poured-bed-idorder)
            workload=poured-bed extra=(--sort-every 0)
            [ "$n" -gt "$BASE" ] && extra+=(--tile-from "$BASE")
            ;;
        # Sorting during the run (issue 44): a new random order every STEPS/4 steps
        # (VARIDEM_SORT_CURVE=random), so that every sort moves every particle (a
        # settled bed's sorts find them in place): what a sort costs on the device.
        poured-bed-sorting)
            workload=poured-bed extra=(--sort-every $((STEPS / 4))) pre=(env VARIDEM_SORT_CURVE=random)
            [ "$n" -gt "$BASE" ] && extra+=(--tile-from "$BASE")
            ;;
        hard-bed) extra=(--hard-solver colored) ;;
    esac
    # What is timed: a generated workload of N, or (channel) scenes/channel-small.toml
    # from its start (issue 48: the channel filled, the inflow running).
    local what=(--workload "$workload" --n "$n")
    [ "$w" = channel ] && what=(scenes/channel-small.toml)
    step "bench $w $backend $prec n=$n" "$budget" "${pre[@]}" "$VARIDEM" bench "${what[@]}" \
        --steps "$steps" --warmup 20 --profile-steps 5 --backend "$backend" --precision "$prec" "${extra[@]}"
    local rc=$?
    local status=ok
    case $rc in
        0) ;;
        124) status="stopped at its budget of $budget s" ;;
        125) status="skipped: not enough time left" ;;
        *) status="$(grep -m1 '^error:' <<<"$STEP_OUT" || echo "exit $rc")" ;;
    esac
    awk -v w="$w" -v b="$backend" -v p="$prec" -v n="$n" -v st="$status" '
        function clean(s) { gsub(/,/, ";", s); gsub(/"/, "", s); return s }
        /^particles:/ { parts = $2 }
        /^particle-steps\/s:/ { rate = $2 }
        /^steps:/ { steps = $2 }
        /^wall time:/ { wall = $3 }
        /^kernel path:/ { sub(/^kernel path: /, ""); path = $0 }
        /^gpu time per step: [0-9]/ { gpu = $5; d = $0; sub(/.*, /, "", d); sub(/ dispatches.*/, "", d) }
        /^gpu time, / { f = $0; sub(/^gpu time, /, "", f); split(f, q, ":"); ms = q[2]; sub(/ ms.*/, "", ms); sub(/^ /, "", ms)
            fam = fam (fam == "" ? "" : ";") q[1] "=" ms }
        /^sorts during the run: / { so = $0; sub(/ ms each.*/, "", so); sub(/.*, /, "", so) }
        END { if (parts != "") n = parts
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", w, b, (b == "cpu" ? "f64" : p), n, rate, steps, wall, gpu, d, clean(fam), clean(path), clean(st), so }' <<<"$STEP_OUT" >>"$CSV"
    return $rc
}

# Budgets grow with N; the larger sizes run fewer steps.
budget_for() { if [ "$1" -le 100000 ]; then echo 60; elif [ "$1" -le 1000000 ]; then echo 90; else echo 150; fi; }
for w in "${WORKLOADS[@]}"; do
    sizes=("${SIZES[@]}") cpu_n="$CPU_N"
    [ "$w" = hard-bed ] && sizes=("${HARD_SIZES[@]}") cpu_n="$HARD_CPU_N"
    for n in "${sizes[@]}"; do
        for prec in f32 f64; do
            bench "$w" gpu "$prec" "$n" "$STEPS" "$(budget_for "$n")"
        done
    done
    bench "$w" cpu f64 "$cpu_n" "$STEPS" 120
done
# Preclik et al. §4.3's channel (hard contacts, removal, the layered inflow), as its
# scene stands: N is the scene's particles, reserved ones included.
for prec in f32 f64; do
    bench channel gpu "$prec" 0 "$STEPS" 90
done
bench channel cpu f64 0 "$STEPS" 120
# The largest regular size once more in id order (sort_every = 0), f32.
bench poured-bed-idorder gpu f32 "${SIZES[-1]}" "$STEPS" "$(budget_for "${SIZES[-1]}")"
# And sorted on the device every STEPS/4 steps (50; quick mode 5), each sort moving
# every particle, f32.
bench poured-bed-sorting gpu f32 "${SIZES[-1]}" "$STEPS" "$(budget_for "${SIZES[-1]}")"
# The largest N the device holds: each workload and precision up the ladder until a
# size is refused (DeviceTooSmall, memory) or does not fit the time left.
for w in "${WORKLOADS[@]}"; do
    larger=("${LARGER[@]}")
    [ "$w" = hard-bed ] && larger=("${HARD_LARGER[@]}")
    for prec in f32 f64; do
        for n in "${larger[@]}"; do
            bench "$w" gpu "$prec" "$n" 20 "$(budget_for "$n")" || break
        done
    done
done

# ---- results.md ------------------------------------------------------------------
{
    echo "## Real GPU: $(grep -m1 -E '^\s+\[0\]' "$OUT/info.txt" | sed 's/^ *\[0\] *//') ($(date -u +%Y-%m-%d))"
    echo
    echo "\`bench/device.sh\` (quick mode: $QUICK), $(nproc) CPU cores; $(tail -1 "$OUT/parity.txt") ($(grep -c ', ok' "$OUT/parity.txt") of $(($(wc -l <"$OUT/parity.txt") - 2)) parity lines ok)."
    echo "Particle-steps/s (clump-bed: sphere-steps); GPU/CPU against the CPU backend at N = $CPU_N (hard-bed: $HARD_CPU_N) on all cores. Poured beds above $BASE spheres are tiled from the settled bed of $BASE (\`--tile-from\`) and sorted along the grid's cells at set-up; poured-bed-idorder is the same bed in id order (\`--sort-every 0\`); the hard bed uses the colored solver on both backends; channel is scenes/channel-small.toml from its start (N counts its reserved spheres)."
    echo
    echo "| workload | N | GPU f32 | GPU f64 | CPU f64 | f32/CPU | f64/CPU | status |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 {
            k = $1 SUBSEP $4
            if (!(k in seen)) { seen[k] = 1; order[++m] = k }
            if ($2 == "cpu") { cpu[$1] = $5; rate[k, "cpu"] = $5 } else rate[k, $3] = $5
            if ($12 != "ok") bad[k] = bad[k] (bad[k] == "" ? "" : "; ") $2 " " $3 ": " $12
        }
        function r(x) { return x == "" ? "–" : x }
        function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "–" : sprintf("%.2g×", a / b) }
        END { for (i = 1; i <= m; i++) { split(order[i], f, SUBSEP); k = order[i]
            printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2], r(rate[k, "f32"]), r(rate[k, "f64"]), r(rate[k, "cpu"]),
                ratio(rate[k, "f32"], cpu[f[1]]), ratio(rate[k, "f64"], cpu[f[1]]), (k in bad) ? bad[k] : "ok" } }' <(head -1 "$CSV"; tail -n +2 "$CSV" | sort -t, -s -k1,1 -k4,4n)
    echo
    echo "Where the GPU time goes (timestamp queries around every dispatch, 5 profiled steps; ms per step by kernel family) and the kernel path:"
    echo
    echo "| workload | N | precision | GPU ms/step | dispatches/step | by family | kernel path |"
    echo "|---|---|---|---|---|---|---|"
    tail -n +2 "$CSV" | sort -t, -s -k1,1 -k4,4n -k3,3 |
        awk -F, '$2 == "gpu" && $12 == "ok" { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $4, $3, $8, $9, $10, $11 }'
    echo
    awk -F, 'NR > 1 && $2 == "gpu" && $3 == "f32" && $12 == "ok" {
            if ($1 == "poured-bed" && $5 > 0) step[$4] = 1e3 * $4 / $5
            if ($1 == "poured-bed-sorting" && $13 != "") { sort[$4] = $13; m[++k] = $4 } }
        END { for (i = 1; i <= k; i++) { n = m[i]
            printf "Sorting during the run (poured-bed-sorting, f32, N = %s): %s ms a sort (positions read back, the order on the host, every record moved on the device)", n, sort[n]
            if (n in step) printf ", %.2f steps of the sorted bed (%.3f ms a step), %.2f %% of the 1000 steps between sorts at the default sort_every", sort[n] / step[n], step[n], 100 * sort[n] / (1000 * step[n])
            print "." } }' "$CSV"
    echo
    echo "Skipped or refused: $(awk -F, 'NR > 1 && $12 != "ok"' "$CSV" | wc -l) runs (status column above; log.txt has every command and its output). Whole script: $(($(date +%s) - START)) s of a $BUDGET s budget."
} >"$OUT/results.md"
note "device: done in $(($(date +%s) - START)) s; $OUT/results.md"
# A failed parity check is the script's failure too (every file is written first).
[ $parity_ok = 1 ] || exit 2
