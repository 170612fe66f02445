# "sockmeter top LOG" in a real terminal (tmux): started before the log
# exists it says it waits; while pace.py (metered, JSON, interval 0.2 s)
# sends to socat at 200,000 B/s (195.3K/s) the table shows the
# connection's peer with a nonzero rate near the pace (140K/s to 249K/s),
# and its process with a nonzero rate; q quits with exit status 0.
. "$(dirname "$0")/lib.sh"
need tmux socat
sock=smtools$$
tmx() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'tmx kill-server 2>/dev/null; sm_cleanup' EXIT
mkdir -p "$T/logs"
port=$(free_port)
log=$T/logs/python3.log
tmx new-session -d -s top -x 180 -y 30 \
	"'$LAUNCHER' top -d 0.2 '$log'; echo TOP_EXIT=\$?; sleep 60" ||
	fail "tmux new-session failed"
screen() { tmx capture-pane -p -t top; }
wait_for 5 eval 'screen | grep -q "waiting for $log"' ||
	fail "no 'waiting for' line: $(screen)"
bg_start socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/logs/%n.log \
	bg_start sm "$PY" "$HERE/pace.py" 127.0.0.1 "$port" 600000 200000
# a connection row: ... PEER  IN/s  OUT/s ... with OUT/s like 195.3K/s
row_re="^python3 +[0-9]+ +[0-9]+ tcp +127\\.0\\.0\\.1:$port +[0-9.]+[BKMG]?/?s? +(1[4-9][0-9]|2[0-4][0-9])\\.[0-9]K/s .* open "
wait_for 6 eval 'screen | grep -Eq "$row_re"' ||
	fail "no row with peer 127.0.0.1:$port and a rate near 195.3K/s: $(screen)"
screen | grep -Eq "^python3 +[0-9]+ +0B/s +[1-9][0-9.]*[KM]/s" ||
	fail "no process row with a rate: $(screen)"
tmx send-keys -t top q
wait_for 5 eval 'screen | grep -q "^TOP_EXIT="' || fail "q did not quit: $(screen)"
screen | grep -q "^TOP_EXIT=0$" || fail "exit status: $(screen | grep TOP_EXIT)"
exit 0
