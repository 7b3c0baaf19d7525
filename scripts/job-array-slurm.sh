#!/usr/bin/env bash
# Example: a policy comparison spread over a Slurm job array, then merged.
#
#   sbatch --array=0-3 scripts/job-array-slurm.sh          # 4 shards
#   # when all tasks are done (or: sbatch --dependency=afterok:<jobid> ...):
#   quotasim merge --out results/philly results/philly-shards
#
# Each task runs `quotasim compare` for the policies i with i mod N == K,
# K = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT
# (quotasim reads them itself; --shard K/N overrides). All shards write into
# one shared directory (each policy's files and shard-K-of-N.json); merge
# checks that every shard is there and that all ran the same trace, mapping
# and policies, and writes the report, byte-identical to a single run's.
#SBATCH --job-name=quotasim-compare
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=00:30:00
set -euo pipefail
QUOTASIM=${QUOTASIM:-quotasim}
TRACE=${TRACE:-../shared/traces/philly-derived/pollux_philly_jobs_by_vc.csv}
MAPPING=${MAPPING:-traces/mappings/philly-pollux.json}
POLICIES=${POLICIES:-standard}       # or a directory of policy files
OUT=${OUT:-results/philly-shards}
mkdir -p "$OUT"
"$QUOTASIM" compare "$TRACE" --mapping "$MAPPING" --policies $POLICIES --out "$OUT" \
    --threads "${SLURM_CPUS_PER_TASK:-0}" --bucket-hours 6
