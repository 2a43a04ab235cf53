#!/usr/bin/env bash
# Installs what podman_test.py runs cordon in: podman with runc (crun refuses a hybrid cgroup
# layout), newuidmap for rootless containers, and a static busybox for the container's shell.
# Debian packages; root only.
set -euo pipefail
wanted=(podman runc uidmap busybox-static)
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "container setup: podman $(podman --version | awk '{print $3}'), runc, uidmap, busybox-static"
