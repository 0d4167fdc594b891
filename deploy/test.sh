# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
## Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
!# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
## Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
T# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
:# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
P# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
S# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
Q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
L# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
R# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
M# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
Q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
,# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
y# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
## Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
w# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
k# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
E# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
x# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
`# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
`# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
$# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
(# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
$# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
)# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
y# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
## Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
T# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
<# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
<# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
<# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
<# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
;# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
## Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
1# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
2# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
7# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
1# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
U# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
A# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
\# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
w# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
m# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
~# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
'# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
[# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
9# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
]# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
+# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
[# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
9# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
]# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
+# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
_# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
[# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
9# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
]# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
+# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
$# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
'# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
2# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
|# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
w# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
;# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
1# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
2# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
7# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
0# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
.# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
1# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
U# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
q# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
x# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
\# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
$# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
b# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
\# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
w# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
i# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
h# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
(# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
f# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
)# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
v# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
/# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
2# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
># Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
&# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
1# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
|# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
|# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
u# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
;# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
n# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
g# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
t# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
w# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
r# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
k# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
s# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
p# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
a# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
-# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
l# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
o# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
c# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
k# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
e# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
d# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
 # Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
$# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
@# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
"# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    fi
  done
