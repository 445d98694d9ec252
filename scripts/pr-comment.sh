#!/usr/bin/env bash
# Posts FILE as the plan comment of pull request PR in REPO (owner/name), or updates the
# comment bpa posted before (found by its marker), so a pull request carries one plan comment,
# always the latest. Needs the GitHub CLI (gh) and GH_TOKEN.
#   scripts/pr-comment.sh REPO PR FILE
set -euo pipefail
repo=$1 pr=$2 file=$3
marker='<!-- bpa-plan -->'
id=$(gh api --paginate "repos/$repo/issues/$pr/comments" \
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
if [ -n "$id" ]; then
  gh api --method PATCH "repos/$repo/issues/comments/$id" -F "body=@$file" > /dev/null
  echo "updated comment $id"
else
  gh api --method POST "repos/$repo/issues/$pr/comments" -F "body=@$file" > /dev/null
  echo "posted a comment on #$pr"
fi
