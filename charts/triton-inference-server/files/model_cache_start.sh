# Triton's start with the node-local model cache (docs/serving.md "Node-local model cache"): serve from this node's
# published view when it is complete for what this replica expects, else from the bucket, and say which in the log.
#   bash model_cache_start.sh COMMAND [ARG...]    (the args carry --model-repository=<the bucket URL>)
# MODEL_CACHE_VIEW: views/<key> under the read-only cache mount; MODEL_CACHE_REPOSITORY: the bucket URL the view must
# mirror; MODEL_CACHE_MODELS: "model[:version] ..." the replica needs; MODEL_CACHE_WAIT_SECONDS: how long a fill in
# progress on this node (a fresh FILLING) is waited for; MODEL_CACHE_STALE_SECONDS: a view the node's prefetch last
# checked longer ago than this is not used (the DaemonSet is gone or cannot reach the bucket); MODEL_CACHE_STATUS
# (optional): a file the choice is written to, "hit" or "miss <why>", which the model-state exporter turns into
# tritonfleet_triton_model_cache_hit.
set -u
FILL_FRESH_SECONDS=30  # FILLING is touched every 10 s while a fill runs (tritonfleet/models/node_cache.py)
POLL_SECONDS=${MODEL_CACHE_POLL_SECONDS:-5}

age() { echo $(( $(date +%s) - $(stat -c %Y "$1") )); }

# Why this node's view cannot serve this replica now; nothing when it can.
unusable() {
  local current="$MODEL_CACHE_VIEW/current" mirrors checked want model version
  [ -f "$current/COMPLETE" ] || { echo "no complete view at $current"; return; }
  read -r mirrors < "$current/COMPLETE"
  [ "$mirrors" = "$MODEL_CACHE_REPOSITORY" ] || { echo "the view mirrors $mirrors, not $MODEL_CACHE_REPOSITORY"; return; }
  checked=$(age "$current/COMPLETE")
  [ "$checked" -le "$MODEL_CACHE_STALE_SECONDS" ] ||
    { echo "the view was last checked ${checked} s ago (is the node's prefetch running?)"; return; }
  for want in $MODEL_CACHE_MODELS; do
    model=${want%%:*} version=${want#*:}
    [ -f "$current/$model/config.pbtxt" ] || { echo "model $model is not in the view"; return; }
    [ "$version" = "$want" ] || [ -d "$current/$model/$version" ] ||
      { echo "model $model has no version $version in the view"; return; }
  done
}

deadline=$(( $(date +%s) + MODEL_CACHE_WAIT_SECONDS ))
while reason=$(unusable) && [ -n "$reason" ]; do
  filling="$MODEL_CACHE_VIEW/FILLING"
  [ -f "$filling" ] && [ "$(age "$filling")" -le "$FILL_FRESH_SECONDS" ] && [ "$(date +%s)" -lt "$deadline" ] || break
  echo "model cache: waiting for this node's fill to finish ($reason)" >&2
  sleep "$POLL_SECONDS"
done

if [ -n "$reason" ]; then
  echo "model cache: MISS, Triton reads the bucket $MODEL_CACHE_REPOSITORY: $reason" >&2
  [ -z "${MODEL_CACHE_STATUS:-}" ] || echo "miss $reason" > "$MODEL_CACHE_STATUS"
  exec "$@"
fi
echo "model cache: HIT, Triton reads this node's view $MODEL_CACHE_VIEW/current" >&2
[ -z "${MODEL_CACHE_STATUS:-}" ] || echo "hit" > "$MODEL_CACHE_STATUS"
args=()
for arg in "$@"; do
  case "$arg" in
    --model-repository=*) args+=("--model-repository=$MODEL_CACHE_VIEW/current") ;;
    *) args+=("$arg") ;;
  esac
done
exec "${args[@]}"
