#!/usr/bin/env bash
# Installs the Debian packages hwplan needs, only those missing (sudo when not root).
set -euo pipefail
packages=(cmake ninja-build g++ libcli11-dev libyaml-cpp-dev libfmt-dev libeigen3-dev doctest-dev nlohmann-json3-dev)
# The Python module and its tests (pandas: hwplan.to_dataframe); chromium renders the HTML reports in the tests.
packages+=(pybind11-dev python3-dev python3-pytest python3-pandas chromium)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "hwplan: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
