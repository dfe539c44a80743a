# Sourced by the bandit scripts: `bandit_venv DIR` makes DIR/venv hold bandit==$BANDIT_VERSION
# (default 1.9.4, from PyPI, with $PYTHON, default python3), reusing it when it already does.
bandit_venv() {
  local work="$1"
  local version="${BANDIT_VERSION:-1.9.4}" python="${PYTHON:-python3}"
  mkdir -p "$work"
  if [ ! -x "$work/venv/bin/bandit" ] || ! "$work/venv/bin/bandit" --version 2>/dev/null | grep -q "$version"; then
    echo "installing bandit==$version into $work/venv ..." >&2
    rm -rf "$work/venv"
    "$python" -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check "bandit==$version"
  fi
}
