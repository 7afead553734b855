"""Session keys and the consistent-hash ring (DP ranks and the router's workers)."""

import asyncio
from collections import Counter

from infersweep.sim.router import Router, RouterConfig
from infersweep.sim.sessionroute import HashRing, session_key


def test_the_most_specific_session_header_wins():
    assert session_key({"x-correlation-id": "c"}) == "c"
    assert session_key({"x-correlation-id": "c", "x-session-id": "s"}) == "s"
    assert session_key({"x-session-id": "s", "x-smg-routing-key": "k"}) == "k"
    assert session_key({"x-dynamo-session-id": "d", "x-correlation-id": "c"}) == "d"
    assert session_key({"content-type": "x"}) is None


def test_a_key_always_lands_on_the_same_target_and_keys_spread():
    ring = HashRing(4)
    keys = [f"conv-{i}" for i in range(2000)]
    first = [ring.target(k) for k in keys]
    assert first == [HashRing(4).target(k) for k in keys]  # stable across instances
    counts = Counter(first)
    assert set(counts) == {0, 1, 2, 3} and min(counts.values()) > 300


def test_adding_a_target_moves_only_a_share_of_the_keys():
    keys = [f"conv-{i}" for i in range(2000)]
    four, five = HashRing(4), HashRing(5)
    moved = sum(four.target(k) != five.target(k) for k in keys)
    assert moved < 0.35 * len(keys)  # modulo hashing would move ~80 %


def test_the_router_sends_a_session_to_one_worker_and_keyless_requests_in_turn():
    async def go():
        router = Router(RouterConfig(policy="consistent-hash",
                                     workers=[f"http://127.0.0.1:{p}" for p in (1, 2, 3)]))
        group = router.workers
        sticky = {router.pick(group, "w", {"x-correlation-id": "tree-7"}).url for _ in range(20)}
        plain = [router.pick(group, "w", {}).url for _ in range(3)]
        return sticky, plain

    sticky, plain = asyncio.run(go())
    assert len(sticky) == 1
    assert sorted(plain) == ["http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"]
