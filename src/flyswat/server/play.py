"""A table in play: turns, reveals, slap rounds under fair arbitration, and the end.

:class:`Table` adds the game to :class:`~flyswat.server.table.TableBase`. Every public method
checks in full first and raises :class:`~flyswat.errors.FlyswatError` (with a code) changing
nothing; then stores the event and broadcasts it in one step.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from typing import Any

from flyswat import bots
from flyswat.arbiter import Claim, RoundArbiter
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import FlyswatError, IllegalActionError
from flyswat.record import to_record
from flyswat.server import protocol as p
from flyswat.server.seats import Client
from flyswat.server.store import now_iso
from flyswat.server.table import TableBase
from flyswat.view import View, view


class Table(TableBase):
    """A table: lobby (inherited), start, turns, slap rounds and the record."""

    def start(self, seat: int) -> None:
        """The host starts the game: draws a secret seed and publishes only its commitment.

        Raises ``already_started``, ``not_host``, ``not_full`` or ``not_ready``.
        """
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        if seat != self.host:
            raise IllegalActionError("only the host can start the game", "not_host")
        if not all(s.joined for s in self.seats):
            raise IllegalActionError("every seat must be taken first", "not_full")
        waiting = [str(s.name) for s in self.seats if not (s.ready or s.is_bot or s.index == seat)]
        if waiting:
            raise IllegalActionError(f"not ready yet: {', '.join(waiting)}", "not_ready")
        start = self.options.start
        self._event(
            "start",
            {
                "game_id": uuid.uuid4().hex[:16],
                "seed": secrets.token_hex(16),
                "start": start if start is not None else self.rng.randrange(self.options.seats),
                "started_at": now_iso()[:19] + "Z",
            },
        )
        info = self.info()
        game = self._game()
        upcoming = self._upcoming_turn_ms()
        self._broadcast(
            lambda v: p.Started(
                commitment=info.commitment or "", start=game.start, table=info, view=v or {},
                turn_deadline_ms=upcoming,
            )
        )  # fmt: skip
        self._schedule_turn()

    def resume(self) -> None:
        """Start the timers of a restored game (on the running loop): a round that was open
        reopens with a fresh slap window for everyone."""
        if self.state != "playing" or self.game is None:
            return
        if self.game.over:  # stopped between the record and the "over" event
            self._finish()
        elif self.game.round is not None:
            self._open_round(everyone=True)
        else:
            self._schedule_turn()

    def _game(self) -> Game:
        if self.game is None or self.state == "lobby":
            raise IllegalActionError("the game has not started", "not_started")
        if self.state == "over":
            raise IllegalActionError("the game is over", "game_over")
        return self.game

    # -- turns -----------------------------------------------------------------------------

    def reveal(self, seat: int, auto: bool = False) -> None:
        """``seat`` reveals its top card (R10); raises ``not_started``, ``game_over``,
        ``round_open`` or ``not_your_turn``."""
        game = self._game()
        if game.round is not None:
            raise IllegalActionError("a slap round is still open", "round_open")
        if seat != game.to_move:
            raise IllegalActionError(f"it is seat {game.to_move}'s turn", "not_your_turn")
        self._cancel(self._turn_timer)
        self.turn_deadline = None
        turn = game.reveal()
        n = len(game.turns)
        if self.store is not None:
            self.store.append(
                self.code, "reveal", {"turn": n, "seat": seat, "card": turn.card.text, "auto": auto}
            )
        opened = turn.round is not None
        still_open = game.round is not None
        if still_open:
            self._open_round(everyone=False, announce=(seat, turn.card, auto))
            return
        upcoming = self._upcoming_turn_ms()
        self._broadcast(
            lambda v: p.Revealed(
                turn=n, seat=seat, card=turn.card.text, round=opened,
                window_ms=self.options.slap_window_ms if opened else None, auto=auto, view=v or {},
                turn_deadline_ms=None if opened else upcoming,
            )
        )  # fmt: skip
        if opened:  # an empty centre: the round closed at once (R15)
            self._broadcast(lambda v: p.RoundClosed(turn=n, view=v or {},
                                                    turn_deadline_ms=upcoming))  # fmt: skip
        self._next()

    def _next(self) -> None:
        if self.game is not None and self.game.over:
            self._finish()
        else:
            self._schedule_turn()

    def _schedule_turn(self) -> None:
        game = self.game
        if game is None or game.over:
            return
        loop = asyncio.get_running_loop()
        seat = self.seats[game.to_move]
        if seat.is_bot and seat.level is not None:
            delay = bots.reveal_delay_ms(seat.level, self.rng) * self.bot_pace
        else:
            delay = self.options.turn_timeout_ms
            self.turn_deadline = self.clock() + delay
        self._turn_timer = loop.call_later(delay / 1000, self._timed_reveal, len(game.turns))

    def _timed_reveal(self, turns: int) -> None:
        game = self.game
        if game is None or game.over or game.round is not None or len(game.turns) != turns:
            return
        self.reveal(game.to_move, auto=not self.seats[game.to_move].is_bot)

    # -- slap rounds -----------------------------------------------------------------------

    def _open_round(self, everyone: bool, announce: tuple[int, Card, bool] | None = None) -> None:
        """Open the arbiter of the engine's open round and tell everyone, noting per seat
        when the reveal was handed to its connection. ``everyone``: after a restart, wait for
        every human, connected yet or not."""
        game = self.game
        if game is None or game.round is None:
            return
        now = self.clock()
        present = {s.index for s in self.seats if everyone or s.connected}
        self.arbiter = arb = RoundArbiter(
            seats=len(self.seats),
            hands=game.rules.hands,
            window_ms=self.options.slap_window_ms,
            sent_at=dict.fromkeys(present, now),
            allowance_ms={s.index: 0.0 if s.is_bot else s.link.allowance(now) for s in self.seats},
            centre=len(game.centre),
            sure_ms={s.index: s.link.sure_ms(now) for s in self.seats if not s.is_bot},
        )
        self.round_opened = now
        n = len(game.turns)
        handed: set[int] = set()

        def on_sent(seat: int) -> Any:
            def note(t: float) -> None:
                if self.arbiter is arb and seat not in handed and seat in arb.sent_at:
                    handed.add(seat)
                    arb.sent_at[seat] = max(t, now)

            return note

        seat, card, auto = announce if announce else (game.round.seat, game.round.trigger, False)
        self._broadcast(
            lambda v: p.Revealed(
                turn=n, seat=seat, card=card.text, round=True,
                window_ms=self.options.slap_window_ms, auto=auto, view=v or {},
                turn_deadline_ms=None,
            ),
            on_sent,
        )  # fmt: skip
        self._plan_bots(arb, now)
        self._maybe_close()

    def _plan_bots(self, arb: RoundArbiter, now: float) -> None:
        game = self.game
        if game is None:
            return
        loop = asyncio.get_running_loop()
        for seat in self.seats:
            if not seat.is_bot or seat.level is None:
                continue
            planned = bots.decide(seat.level, self._seat_view(seat.index), self.rng)
            planned = [s for s in planned if s.ms <= arb.window_ms]
            if not planned:
                arb.say_done(seat.index)
            for i, s in enumerate(sorted(planned, key=lambda s: s.ms)):
                last = i == len(planned) - 1
                at = max(0.0, (now + s.ms - self.clock()) / 1000)
                self._round_timers.append(
                    loop.call_later(at, self._bot_slap, arb, seat.index, s.card, s.ms, last)
                )

    def _seat_view(self, seat: int) -> View:
        return view(self._game(), seat)

    def _bot_slap(self, arb: RoundArbiter, seat: int, card: Card, ms: int, last: bool) -> None:
        if self.arbiter is not arb or self.game is None:
            return
        try:
            self.game.check_slap(seat, card)
            arb.claim_planned(seat, card, ms)
            self._hands()
        except FlyswatError:
            pass  # a bot's plan that the table refuses is simply not played
        if last:
            arb.say_done(seat)
        self._maybe_close()

    def _hands(self, to: Client | None = None) -> None:
        """Tell everyone (or ``to`` only) how many hands are laid: counts, never cards."""
        arb, game = self.arbiter, self.game
        if arb is None or game is None:
            return
        msg = p.Hands(turn=len(game.turns), laid=arb.laid(), done=sorted(arb.done))
        for client in [to] if to is not None else self.clients():
            client.send(msg)

    def leave(self, client: Client) -> None:
        """``client`` closed (see :meth:`TableBase.leave`); a seat left with no connection
        during a round is not waited for."""
        super().leave(client)
        seat, arb = client.seat, self.arbiter
        if arb is not None and seat is not None and not self.seats[seat].clients:
            arb.say_done(seat)
            self._maybe_close()

    def hello(self, client: Client, token: str | None) -> None:
        """Welcome ``client`` (see :meth:`TableBase.hello`); during a round, the hands so far,
        and its own accepted hands again (they reach the game only when the round closes)."""
        super().hello(client, token)
        game, arb = self.game, self.arbiter
        if game is not None and game.round is not None and arb is not None:
            for claim in arb.claims:
                if claim.seat == client.seat:
                    client.send(self._accepted(claim))
        self._hands(client)

    def _accepted(self, claim: Claim) -> p.Accepted:
        turn = len(self.game.turns) if self.game is not None else 0
        return p.Accepted(turn=turn, card=claim.card.text, ms=round(claim.ms))

    def _current_round(self, turn: int | None) -> tuple[Game, RoundArbiter]:
        game, arb = self._game(), self.arbiter
        is_open = game.round is not None and arb is not None
        if turn is not None and (turn != len(game.turns) or not is_open):
            raise IllegalActionError(f"the round of turn {turn} is not open", "stale_round")
        if game.round is None or arb is None:
            raise IllegalActionError("no slap round is open", "no_round")
        return game, arb

    def slap(self, seat: int, card_text: str, client_ms: int | None, turn: int | None) -> None:
        """``seat`` lays a hand on ``card_text`` (R16) claiming reaction time ``client_ms``.

        Raises ``not_started``, ``game_over``, ``stale_round``, ``no_round``, ``bad_card``,
        ``not_in_centre``, ``done``, ``same_card``, ``no_hands_left``, ``too_fast`` or
        ``too_late`` — and then changes nothing but the count of too-fast claims.
        """
        game, arb = self._current_round(turn)
        card = Card.parse(card_text)
        game.check_slap(seat, card)
        now = self.clock()
        try:
            claim = arb.claim(seat, card, client_ms, now)
        except IllegalActionError as e:
            if e.code == "too_fast":
                self.seats[seat].too_fast += 1
                self._table_update()
            raise
        self.seats[seat].link.compensated(now - arb.sent_at[seat] - claim.ms, now)
        accepted = self._accepted(claim)
        for client in self.seats[seat].clients:
            client.send(accepted)
        self._hands()
        self._maybe_close()

    def done(self, seat: int, turn: int | None) -> None:
        """``seat`` lays no more hands this round (R21)."""
        _, arb = self._current_round(turn)
        arb.say_done(seat)
        self._hands()
        self._maybe_close()

    def _maybe_close(self) -> None:
        arb = self.arbiter
        if arb is None:
            return
        if arb.decided(self.clock()):
            self._close_round()
            return
        deadline = arb.deadline()
        if deadline is not None:
            delay = max(0.0, (deadline - self.clock()) / 1000) + 0.001
            loop = asyncio.get_running_loop()
            self._round_timers.append(loop.call_later(delay, self._check_round, arb))

    def _check_round(self, arb: RoundArbiter) -> None:
        if self.arbiter is arb:
            self._maybe_close()

    def _close_round(self) -> None:
        """Apply the accepted hands in effective-time order, resolve (R18–R20), store, tell."""
        arb, game = self.arbiter, self._game()
        if arb is None:
            return
        self.arbiter = None
        for t in self._round_timers:
            t.cancel()
        self._round_timers.clear()
        slaps = [(c.seat, c.card, round(c.ms)) for c in arb.ordered()]
        n = len(game.turns)
        if self.store is not None:
            data = [{"seat": s, "card": c.text, "ms": ms} for s, c, ms in slaps]
            self.store.append(self.code, "round", {"turn": n, "slaps": data})
        for s, c, ms in slaps:
            game.slap(s, c, ms)
        game.close_round()
        upcoming = self._upcoming_turn_ms()
        self._broadcast(lambda v: p.RoundClosed(turn=n, view=v or {}, turn_deadline_ms=upcoming))
        self._next()

    # -- the end ---------------------------------------------------------------------------

    def _finish(self) -> None:
        game = self.game
        if game is None or self.game_id is None:
            return
        self.cancel_timers()
        record = to_record(
            game,
            [s.record_entry() for s in self.seats],
            id=self.game_id,
            started_at=self.started_at,
            with_commitment=True,
        )
        if self.store is not None:
            self.store.save_record(self.game_id, self.code, record)
        self._event("over", {"game_id": self.game_id})
        self.record = record
        info = self.info()
        self._broadcast(
            lambda v: p.Over(
                result=record["result"], seed=str(game.seed), commitment=record["commitment"],
                record_url=info.record_url or "", table=info, view=v or {},
            )
        )  # fmt: skip

    def cancel_timers(self) -> None:
        """Stop every timer of this table (the game ended, or the server stops)."""
        self._cancel(self._turn_timer)
        for t in self._round_timers:
            t.cancel()
        self._round_timers.clear()

    @staticmethod
    def _cancel(timer: asyncio.TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()
