# ovni events: the Markdown catalogue lists every event of tests/data/events.txt.
. "$(dirname "$0")/lib.sh"
DATA=$TESTDIR/data/events.txt

check "ovni events runs" "$OVNI" events
"$OVNI" events >"$TMP/all.md" 2>"$TMP/all.err"
head -1 "$TMP/all.md" | grep -q '^# ' && ok "the catalogue starts with a title" || not_ok "the catalogue starts with a title"
[ -s "$TMP/all.err" ] && not_ok "nothing on stderr" || ok "nothing on stderr"

# The signature of each table row, unescaped.
rows() { sed -n 's/^| `\(.*\)` | .* |$/\1/p' "$1" | sed 's/\\|/|/g'; }

grep -v '^## ' "$DATA" >"$TMP/want"
rows "$TMP/all.md" >"$TMP/got"
check_same "every signature of events.txt, in order, and nothing else" "$TMP/got" "$TMP/want"
missing=0
for mcv in $(cut -c1-3 "$TMP/want"); do
	grep -qF "| \`$mcv" "$TMP/all.md" || { missing=$((missing + 1)); echo "#   $mcv missing"; }
done
[ $missing -eq 0 ] && ok "every MCV is listed" || not_ok "every MCV is listed ($missing missing)"

# Each model's section: its id character and version, in id order.
grep '^## ' "$DATA" | while read -r _ name id version; do
	printf '## Model %s\nModel id `%s`, version %s\n' "$name" "$id" "$version"
done >"$TMP/want-sections"
grep -E '^(## Model |Model id )' "$TMP/all.md" | sed 's/, [0-9]* events\.$//' >"$TMP/got-sections"
check_same "a section per model with id and version, ordered by id" "$TMP/got-sections" "$TMP/want-sections"

# Every row has a description: exactly two cells.
bad=$(grep '^| `' "$TMP/all.md" | sed 's/\\|//g' | awk -F'|' 'NF != 4 || $3 ~ /^ *$/' | wc -l)
[ "$bad" -eq 0 ] && ok "every row has a signature and a description" || not_ok "$bad rows without two cells"

# One model, by name or id.
"$OVNI" events nosv >"$TMP/nosv.md" || not_ok "ovni events nosv exits 0"
rows "$TMP/nosv.md" >"$TMP/got"
sed -n '/^## nosv /,/^## /p' "$DATA" | grep -v '^## ' >"$TMP/want"
check_same "ovni events nosv lists the nosv events" "$TMP/got" "$TMP/want"
others=$(grep -c '^## Model' "$TMP/nosv.md")
[ "$others" -eq 1 ] && grep -q '^## Model nosv$' "$TMP/nosv.md" && ok "ovni events nosv has only the nosv section" ||
	not_ok "ovni events nosv has only the nosv section ($others sections)"
[ -z "$(rows "$TMP/nosv.md" | grep -v '^V')" ] && ok "every event of ovni events nosv is a V event" ||
	not_ok "ovni events nosv lists other models' events"
"$OVNI" events V >"$TMP/V.md"
check_same "ovni events V is ovni events nosv" "$TMP/V.md" "$TMP/nosv.md"
"$OVNI" events 6 >"$TMP/6.md"
[ "$(rows "$TMP/6.md" | wc -l)" -eq 67 ] && ok "ovni events 6: 67 nanos6 events" || not_ok "ovni events 6: 67 nanos6 events"

check_fails "an unknown model is an error listing the models" "unknown model 'nOS-V'.*nanos6.*nosv" "$OVNI" events nOS-V
check_fails "an unknown id is an error" "unknown model 'X'" "$OVNI" events X
check_fails "two models are an error" "at most one model" "$OVNI" events ovni nosv
check_fails "an unknown option is an error" "Usage: ovni events" "$OVNI" events --bogus
"$OVNI" events --help >"$TMP/help" && grep -q '^Usage: ovni events' "$TMP/help" && ok "--help" || not_ok "--help"
"$OVNI" events -h | cmp -s - "$TMP/help" && ok "-h is --help" || not_ok "-h is --help"
"$OVNI" help events | cmp -s - "$TMP/help" && ok "ovni help events" || not_ok "ovni help events"

# ovni version names every model's version.
"$OVNI" version >"$TMP/version"
grep '^## ' "$DATA" | while read -r _ name id version; do
	echo "model $name ($id): $version"
done >"$TMP/want"
grep '^model ' "$TMP/version" >"$TMP/got"
check_same "ovni version lists every model's version" "$TMP/got" "$TMP/want"

# Markdown escaping: a description with '|' or '*' would break the table.
grep '^| `' "$TMP/all.md" | sed 's/`[^`]*`//' | grep -E '(^|[^\\])[*_<>]' >"$TMP/unescaped"
[ -s "$TMP/unescaped" ] && not_ok "descriptions are escaped" || ok "descriptions are escaped"
done_testing
