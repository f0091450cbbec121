# Sourced by scripts that fetch Debian packages WITHOUT touching the system's apt configuration
# (private sources list, lists, cache and dpkg status under a cache directory).
# The caller defines log and die, and sets CACHE (state goes to $CACHE/apt/NAME), KEYRING and,
# before fetch_deb, MIRROR (from debian_mirror or QMM_DEBIAN_MIRROR).

# The Debian archive URI of the system's own apt sources: first 'deb' entry that carries the
# system's codename with component main (skipping security), one-line or deb822 format.
debian_mirror() {
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  {
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" | awk -v c="$codename" \
        '$1=="deb" && $3==c { for (i=4;i<=NF;i++) if ($i=="main") { print $2; break } }'
    done
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      awk -v c="$codename" '
        function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " c " ") && (" " comps " ") ~ / main /) { split(uris, u, " "); print u[1] }
                           types=uris=suites=comps=""; enabled="yes" }
        BEGIN { enabled="yes" }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        { k=tolower($1); sub(/:$/, "", k); v=$0; sub(/^[^:]*:[ \t]*/, "", v)
          if (k=="types") types=v; else if (k=="uris") uris=v; else if (k=="suites") suites=v;
          else if (k=="components") comps=v; else if (k=="enabled") enabled=tolower(v) }
        END { flush() }' "$f"
    done
  } | grep -v -i security | head -n1
}

# apt-get with a private sources list, lists, cache, dpkg status and preferences.
# $1 = state dir, $2 = architecture, rest = apt-get arguments.
private_apt() {
  local st=$1 arch=$2; shift 2
  apt-get -q \
    -o Dir::Etc::SourceList="$st/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$st/lists" -o Dir::Cache="$st/cache" \
    -o Dir::State::status="$st/status" \
    -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
    -o APT::Architecture="$arch" -o APT::Architectures="$arch" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
    "$@"
}

# fetch_debs <name> <suite> <arch> <dest dir> <package>...: download .debs of <suite> into <dest dir>.
fetch_debs() {
  local name=$1 suite=$2 arch=$3 dest=$4 st p
  shift 4
  st=$CACHE/apt/$name
  rm -rf "$st"; mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$dest"
  : >"$st/status"
  echo "deb [arch=$arch signed-by=$KEYRING] $MIRROR $suite main" >"$st/sources.list"
  log "apt-get update ($suite, $arch) into $st"
  private_apt "$st" "$arch" update >"$st/update.log" 2>&1 \
    || die "private apt-get update for $suite failed (see $st/update.log; if NO_PUBKEY: apt-get install debian-archive-keyring)"
  for p in "$@"; do
    (cd "$dest" && private_apt "$st" "$arch" download "$p/$suite") >>"$st/download.log" 2>&1 \
      || die "apt-get download $p/$suite ($arch) failed (see $st/download.log)"
  done
  ls "$dest"/*.deb >/dev/null 2>&1 || die "no .deb downloaded for $*"
}

# fetch_deb <name> <suite> <arch> <package> <dest dir>: download one .deb into <dest dir>.
fetch_deb() { fetch_debs "$1" "$2" "$3" "$5" "$4"; }
