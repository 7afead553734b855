"""`sim serve --dp-size`: DP ranks in one server admit independently, each up to its own
--max-num-seqs, and requests spread over them."""

import asyncio

import pytest

from infersweep.sim.model import ModelParams
from infersweep.sim.server import SimConfig, SimServer

SLOW = ModelParams(prefill_tps=1e6, decode_base_ms=20.0, decode_per_seq_ms=0.0, max_num_seqs=2)
FIXED = ModelParams(fixed_ttft_ms=30, fixed_itl_ms=30, max_num_seqs=2)


def _request(Req, tokens=4):
    return Req({"model": "m", "prompt": [1, 2, 3], "max_tokens": tokens, "stream": True})


@pytest.mark.parametrize("params", [SLOW, FIXED], ids=["engine", "fixed"])
def test_each_rank_admits_its_own_limit_and_the_ninth_request_waits(fake, params):
    Resp, Req = fake

    async def go():
        srv = SimServer(SimConfig(served_model_names=["m"], model=params, dp_size=4))
        resps = [Resp() for _ in range(9)]
        for r in resps:
            srv.handle(_request(Req), r)
        await asyncio.sleep(0.005)  # one admission pass, well inside the first step
        during = srv.stats()
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while not all(r.ended for r in resps):
            assert loop.time() < end, "simulator did not finish"
            await asyncio.sleep(0.002)
        return srv, during

    srv, during = asyncio.run(go())
    assert during["dp_size"] == 4
    assert [r["admitted"] for r in during["ranks"]] == [2, 2, 2, 2]
    assert sum(r["queued"] for r in during["ranks"]) == 1  # the ninth: its rank is full
    # the ninth request started only after one of the first eight had finished
    first = sorted(t["send_ns"][0] for t in srv.truth)
    last = sorted(t["send_ns"][-1] for t in srv.truth)
    assert first[8] >= last[0]
    assert first[7] < last[0]


def test_one_rank_is_the_old_single_scheduler(fake):
    Resp, Req = fake

    async def go():
        srv = SimServer(SimConfig(served_model_names=["m"], model=SLOW))
        resps = [Resp() for _ in range(3)]
        for r in resps:
            srv.handle(_request(Req), r)
        await asyncio.sleep(0.005)
        return srv.stats()

    stats = asyncio.run(go())
    assert stats["dp_size"] == 1
    assert stats["ranks"] == [{"admitted": 2, "queued": 1}]


def test_requests_go_to_the_least_loaded_rank_ties_in_turn(fake):
    Resp, Req = fake

    async def go():
        srv = SimServer(SimConfig(served_model_names=["m"], model=SLOW, dp_size=2))
        picks = []
        for i, rank in enumerate(srv.ranks):
            def submit(s, prefilled=False, i=i, inner=rank.submit):
                picks.append(i)
                inner(s, prefilled)
            rank.submit = submit
        for tokens in (50, 1, 50):  # the short one ends after its first step
            srv.handle(_request(Req, tokens), Resp())
        await asyncio.sleep(0.08)
        for _ in range(2):
            srv.handle(_request(Req, 50), Resp())
        return picks

    # ties in turn (0, 1, then 0 again), then the emptier rank 1 twice although it is
    # rank 0's turn for the last one
    assert asyncio.run(go()) == [0, 1, 0, 1, 1]
