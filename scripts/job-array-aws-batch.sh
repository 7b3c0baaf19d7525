#!/usr/bin/env bash
# Example: a policy comparison as an AWS Batch array job, then merged.
#
# The container image holds quotasim and this repository; the traces come
# from S3 (they are not in the image: data stays outside the repository).
# Submit 4 shards (AWS Batch sets AWS_BATCH_JOB_ARRAY_INDEX = 0..3 in each
# child; quotasim also needs the size, given here as an environment override):
#
#   aws batch submit-job --job-name quotasim-compare --job-queue QUEUE \
#     --job-definition quotasim --array-properties size=4 \
#     --container-overrides 'environment=[{name=AWS_BATCH_JOB_ARRAY_SIZE,value=4},
#                            {name=RESULTS,value=s3://BUCKET/results/philly}]' \
#     --container-overrides command=scripts/job-array-aws-batch.sh
#   # then, with a dependency on the array job (--depends-on jobId=ARRAY_JOB_ID):
#   aws s3 sync s3://BUCKET/results/philly shards/ && quotasim merge --out results/philly shards/
#
# Each child runs the policies i with i mod 4 == AWS_BATCH_JOB_ARRAY_INDEX
# and uploads its files (per policy, plus shard-K-of-4.json). `quotasim
# merge` checks the shards describe one comparison and writes the report,
# byte-identical to a single `quotasim compare` run.
set -euo pipefail
QUOTASIM=${QUOTASIM:-quotasim}
TRACE_URL=${TRACE_URL:-s3://BUCKET/traces/philly-derived/pollux_philly_jobs_by_vc.csv}
MAPPING=${MAPPING:-traces/mappings/philly-pollux.json}
RESULTS=${RESULTS:?set RESULTS to an s3:// prefix}
: "${AWS_BATCH_JOB_ARRAY_INDEX:?not running as an AWS Batch array child}"
work=$(mktemp -d)
trace="$work/$(basename "$TRACE_URL")"
aws s3 cp "$TRACE_URL" "$trace"
"$QUOTASIM" compare "$trace" --mapping "$MAPPING" --out "$work/out" --bucket-hours 6
aws s3 cp --recursive "$work/out" "$RESULTS/"
