"""An agent at a real table: a bot account that joins (or opens) a table and plays one game.

It plays through :mod:`flyswat.client` over the same WebSocket protocol as the browser, under
the same rules, arbitration and human floor (R21). Its policy is one of:

- ``search``: the policy of ``examples/policy_search.py`` (a research policy written for
  ``SoloVectorEnv``'s observations), plugged in through :class:`flyswat.client.EnvAgent`:
  the table's view becomes the environment's observation, its action becomes hands;
- ``greedy``: the most valuable flies of the allowed colour (:class:`GreedyAgent`);
- ``easy`` / ``normal`` / ``hard``: a house bot's policy (:class:`LevelAgent`).

Whatever it decides, it lays its hands at a person's pace (``--pace``: a bot level's reaction
times); the times it claims are the ones it measures.

    uv run flyswat serve --port 8000 &
    # a person's identity owns the bot account (made here if not given):
    uv run python examples/table_agent.py --server http://127.0.0.1:8000 --create
    uv run python examples/table_agent.py --server http://127.0.0.1:8000 --join K7QX2M \\
        --owner ID:SECRET --policy search

``--create`` opens a two-seat table that takes bot accounts and prints its code: open
``http://127.0.0.1:8000/?table=CODE`` in a browser to play against the agent.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
from pathlib import Path
from typing import Any

from flyswat.client import Account, Agent, Client, EnvAgent, GreedyAgent, LevelAgent


def search_policy(ranks: tuple[int, ...] = (0, 1)) -> Any:
    """``policy_search``'s policy of ``ranks`` as a SoloEnv policy: an observation dict in, an
    action (a fly index or NO_HAND per hand) out."""
    spec = importlib.util.spec_from_file_location(
        "policy_search", Path(__file__).with_name("policy_search.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def policy(obs: dict[str, Any]) -> list[int]:
        hands = len(obs["action_mask"])
        return [int(a) for a in module.act(obs["observation"][None, :], ranks, hands)[0]]

    return policy


def make_agent(policy: str, pace: str = "normal", seed: int = 0) -> Agent:
    """The agent named ``policy`` (see the module docstring), paced like ``pace``."""
    if policy == "search":
        return EnvAgent(search_policy(), pace, seed)
    if policy == "greedy":
        return GreedyAgent(pace, seed)
    return LevelAgent(policy, seed)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Register the bot account, take a seat, play the game; the ``over`` message."""
    if args.owner:
        pid, secret = args.owner.split(":", 1)
        owner = Account(pid, secret, "")
    else:
        owner = Account.register(args.server, args.owner_name)
        print(f"owner identity: {owner.player}:{owner.secret}")
    bot = Account.register_bot(args.server, owner, args.name)
    print(f"bot account {bot.name} ({bot.player})")
    client = Client(args.server)
    if args.join:
        seated = await client.join(args.join, bot)
    else:
        seated = await client.create(bot, seats=2, bot_accounts=True)
        print(f"table {seated.code}: {args.server}/?table={seated.code}")
    over = await client.play(seated, make_agent(args.policy, args.pace, args.seed))
    result = over.get("result") or {}
    print(f"over: places {result.get('places')}, points {result.get('points')}")
    return over


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--join", metavar="CODE", help="join this table")
    where.add_argument("--create", action="store_true", help="open a table (the default)")
    parser.add_argument("--owner", metavar="ID:SECRET", help="the owner's identity")
    parser.add_argument("--owner-name", default="Owner", help="a new owner's name")
    parser.add_argument("--name", default="Swatter", help="the bot account's name")
    parser.add_argument("--policy", default="search",
                        choices=["search", "greedy", "easy", "normal", "hard"])  # fmt: skip
    parser.add_argument("--pace", default="normal", choices=["easy", "normal", "hard"])
    parser.add_argument("--seed", type=int, default=0)
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
