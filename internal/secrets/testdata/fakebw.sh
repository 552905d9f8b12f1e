#!/bin/sh
# A fake Bitwarden CLI for the secrets tests. The test's wrapper sets:
#   FAKEBW_STATUS   what "bw status" reports (unauthenticated|locked|unlocked),
#                   or "hang" to wait for input forever; "locked" turns into
#                   "unlocked" when BW_SESSION=good-session, like a real bw
#                   given a valid session key.
#   FAKEBW_LOG      file that receives each command line (to check that the
#                   session key never appears in arguments) and, in
#                   FAKEBW_LOG.env, the environment bw was given.
# Items (IDs are GUIDs, as Bitwarden's): hcloud (login + custom fields),
# hcloud-staging, and two items both named "shared". Anything else is
# "Not found.". As the real bw, "get" takes options before "--" and the ID
# after it, and "list items --search=TERM" matches names containing TERM.
if [ -n "$FAKEBW_LOG" ]; then
	echo "$*" >> "$FAKEBW_LOG"
	env | grep -v '^FAKEBW_' > "$FAKEBW_LOG.env"
fi
st="$FAKEBW_STATUS"
if [ "$st" = hang ]; then exec sleep 30; fi
if [ "$st" = locked ] && [ "$BW_SESSION" = good-session ]; then st=unlocked; fi
cmd="$1"; what="$2"; shift 2 2>/dev/null
id=""; search=""; seen_dashdash=""
for a in "$@"; do
	case "$a" in
	--nointeraction) ;;
	--) seen_dashdash=1 ;;
	--search=*) search="${a#--search=}" ;;
	*) if [ -n "$seen_dashdash" ]; then id="$a"; else echo "unexpected argument $a" >&2; exit 2; fi ;;
	esac
done
hcloud='{"object":"item","id":"0b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d","name":"hcloud","type":1,"notes":"note-s3cret",
 "login":{"username":"ops-user","password":"hunter2-s3cret","totp":null},
 "fields":[{"name":"token","value":"field-s3cret","type":1},{"name":"region","value":"fsn1","type":0}]}'
staging='{"object":"item","id":"1c2d3e4f-5061-4b7c-8d9e-0f1a2b3c4d5e","name":"hcloud-staging","type":1,"login":{"password":"staging-s3cret"}}'
shared1='{"object":"item","id":"2d3e4f50-6172-4c8d-9eaf-1a2b3c4d5e6f","name":"shared","type":1,"login":{"password":"shared-one"}}'
shared2='{"object":"item","id":"3e4f5061-7283-4d9e-afb0-2b3c4d5e6f70","name":"shared","type":1,"login":{"password":"shared-two"}}'
case "$cmd" in
status)
	printf '{"serverUrl":"https://vault.example.org","lastSync":"2026-11-29T20:00:00.000Z","userEmail":"ops@example.org","userId":"6f1c","status":"%s"}\n' "$st"
	;;
get)
	if [ "$st" != unlocked ]; then echo "Vault is locked." >&2; exit 1; fi
	case "$what $id" in
	"password 0b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d") printf 'hunter2-s3cret\n' ;;
	"item 0b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d") printf '%s\n' "$hcloud" ;;
	*) echo "Not found." >&2; exit 1 ;;
	esac
	;;
list)
	if [ "$st" != unlocked ]; then echo "Vault is locked." >&2; exit 1; fi
	out=""
	for it in "$hcloud" "$staging" "$shared1" "$shared2"; do
		name=$(printf '%s' "$it" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -n 1)
		case "$name" in *"$search"*) out="$out${out:+,}$it" ;; esac
	done
	printf '[%s]\n' "$out"
	;;
*)
	echo "unknown command $cmd" >&2
	exit 1
	;;
esac
