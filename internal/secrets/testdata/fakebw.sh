#!/bin/sh
# A fake Bitwarden CLI for the secrets tests. Behaviour:
#   FAKEBW_STATUS   what "bw status" reports (unauthenticated|locked|unlocked);
#                   "locked" turns into "unlocked" when BW_SESSION=good-session,
#                   like a real bw given a valid session key.
#   FAKEBW_LOG      file that receives each command line, to check that the
#                   session key never appears in arguments.
# Items: item-1 (login + custom fields). Anything else is "Not found.".
if [ -n "$FAKEBW_LOG" ]; then echo "$*" >> "$FAKEBW_LOG"; fi
st="$FAKEBW_STATUS"
if [ "$st" = locked ] && [ "$BW_SESSION" = good-session ]; then st=unlocked; fi
case "$1" in
status)
	printf '{"serverUrl":"https://vault.example.org","lastSync":"2026-11-29T20:00:00.000Z","userEmail":"ops@example.org","userId":"6f1c","status":"%s"}\n' "$st"
	;;
get)
	if [ "$st" != unlocked ]; then echo "Vault is locked." >&2; exit 1; fi
	case "$2 $3" in
	"password item-1") printf 'hunter2-s3cret\n' ;;
	"item item-1")
		cat <<'JSON'
{"object":"item","id":"item-1","name":"hcloud","type":1,"notes":"note-s3cret",
 "login":{"username":"ops-user","password":"hunter2-s3cret","totp":null},
 "fields":[{"name":"token","value":"field-s3cret","type":1},{"name":"region","value":"fsn1","type":0}]}
JSON
		;;
	*) echo "Not found." >&2; exit 1 ;;
	esac
	;;
*)
	echo "unknown command $1" >&2
	exit 1
	;;
esac
