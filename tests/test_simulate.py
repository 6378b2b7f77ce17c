"""The simulator: bot games from a seed alone, the same whatever the number of processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flyswat import Rules
from flyswat.cli import main
from flyswat.record import read_record, to_record, verify_record
from flyswat.sim.reference import GameStats, game_seed, play_game, simulate, summarise

RULES = Rules(seats=4)


def test_a_game_follows_from_its_arguments_alone() -> None:
    a = play_game(RULES, ["easy", "hard"], "same")
    b = play_game(RULES, ["easy", "hard"], "same")
    assert a.stats == b.stats
    assert [(t.seat, t.card) for t in a.game.turns] == [(t.seat, t.card) for t in b.game.turns]
    assert a.stats != play_game(RULES, ["easy", "hard"], "other").stats
    assert a.stats.levels == ("easy", "hard", "easy", "hard")


def test_a_game_is_played_to_its_end_with_consistent_stats() -> None:
    played = play_game(Rules(seats=5), ["normal"], "whole")
    game, stats = played.game, played.stats
    assert game.over
    result = game.result()
    assert (stats.points, stats.flies, stats.places) == (result.points, result.flies, result.places)
    assert stats.turns == len(game.turns)
    assert stats.rounds == sum(1 for t in game.turns if t.round is not None)
    assert stats.start == game.start
    assert len(game.where()) == 112
    wrong = [0] * 5
    for t in game.turns:
        if t.round is not None:
            for s in t.round.slaps:
                wrong[s.seat] += s.card.colour not in t.round.allowed
    assert stats.wrong == tuple(wrong)
    assert sum(stats.wrong) > 0  # normal bots do misjudge, over a whole game


def test_slaps_arrive_in_reaction_time_order_ties_by_seat() -> None:
    game = play_game(RULES, ["easy", "normal", "hard"], "order").game
    rounds = [t.round for t in game.turns if t.round is not None]
    assert sum(len(r.slaps) for r in rounds) > 20
    for r in rounds:
        keys = [(s.ms, s.seat) for s in r.slaps]
        assert keys == sorted(keys)


def test_only_slaps_within_the_slap_window_are_applied() -> None:
    rules = Rules(seats=4, slap_window_ms=600)
    played = play_game(rules, ["easy"], "window")
    slaps = [s for t in played.game.turns if t.round is not None for s in t.round.slaps]
    assert slaps
    assert all(s.ms is not None and rules.in_window(s.ms) for s in slaps)  # R21: ms < 600
    assert sum(played.stats.late) > 0


def test_the_start_player_is_drawn_from_the_seed_unless_given() -> None:
    starts = {play_game(RULES, ["normal"], f"start-{i}").stats.start for i in range(12)}
    assert len(starts) > 1
    assert play_game(RULES, ["normal"], "given", start=3).game.start == 3


def test_a_shared_first_place_is_a_fractional_win() -> None:
    stats = GameStats(
        start=1,
        levels=("easy", "normal", "hard"),
        points=(10, 10, 4),
        flies=(3, 3, 2),
        places=(1, 1, 3),
        wrong=(0, 1, 2),
        late=(0, 0, 0),
        turns=110,
        rounds=30,
    )
    assert stats.wins() == (0.5, 0.5, 0.0)
    assert [stats.position(seat) for seat in range(3)] == [2, 0, 1]
    summary = summarise([stats])
    assert [(x.label, x.win_share) for x in summary.positions] == [
        ("start", 0.5),
        ("+1", 0.0),
        ("+2", 0.5),
    ]
    assert [(x.label, x.points, x.wrong) for x in summary.levels] == [
        ("easy", 10, 0),
        ("normal", 10, 1),
        ("hard", 4, 2),
    ]


def test_win_shares_add_up_to_one_per_game() -> None:
    stats = simulate(RULES, ["normal", "hard"], "shares", 20)
    summary = summarise(stats)
    assert summary.games == 20
    assert sum(x.win_share for x in summary.positions) == pytest.approx(1.0)
    assert sum(x.win_share * x.seat_games for x in summary.levels) == pytest.approx(20)


def test_the_same_seed_gives_the_same_results_whatever_the_number_of_processes() -> None:
    levels = ["easy", "normal", "hard"]
    one = simulate(RULES, levels, 42, 24, jobs=1)
    two = simulate(RULES, levels, 42, 24, jobs=2)
    assert one == two
    assert one[5] == play_game(RULES, levels, game_seed(42, 5)).stats
    assert len({s.points for s in one}) > 1


def test_the_command_line_plays_summarises_writes_records_and_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, plot = tmp_path / "records", tmp_path / "plot.png"
    argv = ["simulate", "--games", "6", "--seats", "3", "--bots", "easy,hard", "--seed", "cli"]
    status = main([*argv, "--jobs", "2", "--records", str(records), "--plot", str(plot)])
    assert status == 0
    out = capsys.readouterr().out
    for text in ("6 bot games", "position start", "level easy", "level hard", "slap rounds"):
        assert text in out
    files = sorted(records.glob("*.json"))
    assert [f.name for f in files] == [f"cli-{i}.json" for i in range(6)]
    for f in files:
        record = read_record(f)
        assert verify_record(record) == []
        assert record["seats"][1] == {"name": "Bot 2", "kind": "bot", "level": "hard"}
        assert record["seed"] == f.stem
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The record is the game itself: the same game played again gives the same record.
    first = json.loads(files[0].read_text())
    again = play_game(Rules(seats=3), ["easy", "hard"], "cli-0").game
    assert to_record(again, first["seats"], id="cli-0", started_at=first["started_at"]) == first


@pytest.mark.parametrize(
    "argv",
    [
        ["--bots", "normal,expert"],
        ["--seats", "9"],
        ["--jobs", "0"],
        ["--games", "-1"],
        ["--remove", "200"],
    ],
)
def test_the_command_line_refuses_bad_options(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--games", "1", *argv]) == 2
    assert "flyswat simulate:" in capsys.readouterr().err
