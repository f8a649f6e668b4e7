# Sourced (not run) by scripts/container-test and scripts/package-test: the tools that run
# containers with no Docker engine and no registry, the local Debian base image, and the options
# every container of those tests runs with. Needs root (rootful podman).
#   . scripts/lib/base-image.sh
#   apt_install_missing "${container_tools[@]}" curl   # installs what is not installed yet
#   set_run_options                                    # sets the array run_options
#   podman image exists "$base_image" || make_base_image WORK_DIR LOG_FILE
# shellcheck shell=bash

# The base image, under the name the Dockerfile's FROM lines use. It is made locally (below)
# and containers are run with --pull=never, so no registry is ever asked.
base_image=docker.io/library/debian:bookworm-slim

# runc rather than crun: crun 1.8 refuses a host whose cgroup v2 hierarchy holds a controller
# while v1 is in use too ("cgroups in hybrid mode not supported"); runc runs there and anywhere
# else. iptables is what netavark (podman's bridge network) sets up port publishing with.
# shellcheck disable=SC2034 # used by the scripts that source this
container_tools=(podman runc debootstrap debian-archive-keyring netavark aardvark-dns
                 iptables slirp4netns uidmap)

# PACKAGE...: installs those not installed yet with apt-get.
apt_install_missing() {
  local package missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
}

# podman schedules each container's health check with a systemd timer, and where systemd does
# not run (containers, sandboxes) it logs "unable to get systemd connection" at level error for
# each start and stop, harmlessly: the test runs the check itself (podman healthcheck run).
# Those lines are left out; all else podman prints is kept.
podman_quiet() {
  podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2)
}

# Limits given to every container: without CAP_SYS_RESOURCE (as in some sandboxes) the runtime
# cannot raise RLIMIT_NOFILE and RLIMIT_NPROC to podman's defaults (1048576 and 32768), so ask
# for no more than this process has. Sets the array run_options.
set_run_options() {
  local nofile nproc
  nofile=$(ulimit -Hn)
  [ "$nofile" = unlimited ] && nofile=1048576
  nproc=$(ulimit -Hu)
  { [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
  # shellcheck disable=SC2034 # used by the scripts that source this
  run_options=(--runtime runc --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
}

# Prints "URI SUITE" for each Debian source apt uses, from one-line and deb822 files.
apt_sources() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                       print $i, $(i + 1) }' "$file"
  done
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk 'function flush() { if (types ~ /(^| )deb( |$)/ && enabled !~ /^no$/)
                              for (u = 1; u <= nu; u++) for (s = 1; s <= ns; s++) print uris[u], suites[s]
                            types = ""; enabled = ""; nu = 0; ns = 0 }
         /^[[:space:]]*#/ { next }
         /^[[:space:]]*$/ { flush(); next }
         tolower($1) == "types:" { $1 = ""; types = $0 }
         tolower($1) == "enabled:" { enabled = tolower($2) }
         tolower($1) == "uris:" { nu = 0; for (f = 2; f <= NF; f++) uris[++nu] = $f }
         tolower($1) == "suites:" { ns = 0; for (f = 2; f <= NF; f++) suites[++ns] = $f }
         END { flush() }' "$file"
  done
}

# WORK_DIR LOG_FILE: makes $base_image with debootstrap --variant=minbase from the Debian mirror
# that apt already uses, in WORK_DIR/rootfs (removed after), and imports it into podman. The
# debootstrap output goes to LOG_FILE. Status 1 when it cannot.
make_base_image() {
  local work_dir=$1 log_file=$2 mirror security rootfs
  mirror=$(apt_sources | awk '$2 == "bookworm" { print $1; exit }')
  security=$(apt_sources | awk '$2 == "bookworm-security" { print $1; exit }')
  if [ -z "$mirror" ]; then
    echo "no apt source for bookworm in /etc/apt/sources.list{,.d}: cannot debootstrap" >&2
    return 1
  fi
  echo "debootstrap from $mirror (security: ${security:-none})"
  rootfs=$work_dir/rootfs
  nice -n 10 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" \
    >"$log_file" 2>&1 || {
    tail -n 20 "$log_file"
    return 1
  }
  # Make it like the official slim image: apt sources for bookworm, its updates and security
  # updates from the same mirrors; no documentation, manual pages or translations (now or from
  # later installs); no apt lists or package caches.
  rm -f "$rootfs/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\n' "$mirror"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$security" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\n' "$security"
      printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$rootfs/etc/apt/sources.list.d/debian.sources"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  cat >"$rootfs/etc/apt/apt.conf.d/slim" <<'EOF'
Acquire::Languages "none";
APT::AutoRemove::SuggestsImportant "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda}/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
    -exec rm -rf {} +
  tar -C "$rootfs" --numeric-owner -c . |
    podman import --change 'CMD ["bash"]' \
      --message "debootstrap --variant=minbase bookworm from $mirror" - "$base_image" >/dev/null
  rm -rf "$rootfs"
}
