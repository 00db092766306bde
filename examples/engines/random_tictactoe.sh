#!/usr/bin/env bash
# A random player of tic-tac-toe on a square board, speaking GTP 2 on standard input and output:
# the least a program needs to play in `agon match` or `agon play` (docs/engine.md, "Other
# programs as players"). Agon tells it the board with boardsize and the opponent's moves with
# play, and asks genmove for its own; it answers with a cell nobody has taken yet.
#   agon match tictactoe engine:examples/engines/random_tictactoe.sh@2s random --games 10
commands="protocol_version name version known_command list_commands quit boardsize clear_board
play genmove"
files=abcdefghijklmnopqrstuvwxyz
size=3
taken=" "

reply() { printf '=%s %s\n\n' "$id" "$1"; }

while read -r first rest; do
    id=""
    if [[ $first =~ ^[0-9]+$ ]]; then id=$first; read -r first rest <<<"$rest"; fi
    read -r -a words <<<"$rest"
    case "${first,,}" in
        "") ;;
        protocol_version) reply 2 ;;
        name) reply "random tic-tac-toe" ;;
        version) reply 1 ;;
        known_command) [[ " ${commands//$'\n'/ } " == *" ${words[0]} "* ]] && reply true || reply false ;;
        list_commands) reply "${commands// /$'\n'}" ;;
        boardsize) size=${words[0]}; taken=" "; reply "" ;;
        clear_board) taken=" "; reply "" ;;
        play) taken+="${words[1]} "; reply "" ;;
        genmove)
            free=()
            for ((rank = 1; rank <= size; rank++)); do
                for ((file = 0; file < size; file++)); do
                    cell=${files:file:1}$rank
                    [[ $taken == *" $cell "* ]] || free+=("$cell")
                done
            done
            move=${free[RANDOM % ${#free[@]}]}
            taken+="$move "
            reply "$move" ;;
        quit) reply ""; exit 0 ;;
        *) printf '?%s unknown command\n\n' "$id" ;;
    esac
done
