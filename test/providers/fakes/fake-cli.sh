#!/bin/sh
# Stands in for kind, minikube, helm, kubectl and docker in the provider contract tests. A shell
# script, not Node: the tests make over a hundred calls, and a Node start costs ~70 ms of CPU each.
# Records each call as a directory under $NETREPRO_FAKE_LOG named by its start time: tool, argv
# (each word NUL-terminated), stdin (only for `tee`: reading it for every call could wait on an open
# pipe), config (the file handed over with --config: it is removed with the run directory).
# Answers from $NETREPRO_FAKE_REPLIES/NNNN/ (tool, args: leading words NUL-terminated, stdout,
# stderr, code); the first reply in NNNN order whose tool and leading words match wins. A reply with a
# file `once` answers one call: it is marked `used` and skipped from then on.
PATH=/usr/bin:/bin # the test puts only the fakes on PATH
tool=$1
shift
call="$NETREPRO_FAKE_LOG/$(date +%s%N)-$$"
mkdir "$call"
printf '%s' "$tool" >"$call/tool"
printf '%s\0' "$@" >"$call/argv"
config= next= tee=
for word in "$@"; do
  [ -n "$next" ] && config=$word && next=
  [ "$word" = --config ] && next=1
  [ "$word" = tee ] && tee=1
done
[ -n "$tee" ] && cat >"$call/stdin"
[ -n "$config" ] && cat "$config" >"$call/config"
for reply in "$NETREPRO_FAKE_REPLIES"/*/; do
  [ -f "${reply}tool" ] && [ ! -f "${reply}used" ] || continue
  IFS= read -r replyTool <"${reply}tool" || :
  [ "$replyTool" = "$tool" ] || continue
  head -c "$(wc -c <"${reply}args")" "$call/argv" | cmp -s - "${reply}args" || continue
  [ -f "${reply}once" ] && : >"${reply}used"
  cat "${reply}stdout"
  cat "${reply}stderr" >&2
  IFS= read -r code <"${reply}code" || :
  exit "$code"
done
exit 0
