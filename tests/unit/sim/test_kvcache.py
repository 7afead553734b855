"""The KV pool: chained page hashes, prefix matches, LRU eviction, the CPU tier."""

import pytest

from infersweep.sim.kvcache import Hold, KVConfig, KVPool, page_hashes


def words(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def run(pool: KVPool, tokens: list, count: bool = True) -> tuple[tuple[int, int], Hold]:
    """One request through the pool: admit, compute, finish."""
    hold = Hold(page_hashes(tokens, pool.page))
    got = pool.admit(hold, len(tokens), count=count)
    assert got is not None
    pool.commit(hold)
    pool.release(hold)
    return got, hold


def test_only_full_pages_are_hashed_and_equal_pages_after_equal_prefixes_match():
    a = words("a", 40)
    assert len(page_hashes(a, 16)) == 2
    b = words("b", 16) + a[16:40]  # page 2 equal in content but after another prefix
    assert page_hashes(a, 16)[1] != page_hashes(b, 16)[1]
    assert page_hashes(a, 16) == page_hashes(a + ["x"], 16)


def test_a_repeated_prefix_hits_in_whole_pages_and_the_last_token_is_always_computed():
    pool = KVPool(KVConfig(prefix_caching=True, page_size=16))
    first = words("t", 50)
    assert run(pool, first)[0] == (0, 0)
    assert run(pool, first + words("u", 30))[0] == (48, 0)  # 3 full pages of the 50
    assert run(pool, words("t", 48))[0] == (32, 0)  # a whole-page prompt keeps its last page
    assert pool.queries == 50 + 80 + 48 and pool.hits == 80
    assert pool.computed == pool.queries - pool.hits


def test_without_prefix_caching_nothing_hits():
    pool = KVPool(KVConfig(prefix_caching=False, page_size=16, pool_tokens=1600))
    run(pool, words("t", 50))
    assert run(pool, words("t", 50))[0] == (0, 0)
    assert pool.used_pages == 0


def test_unreferenced_pages_are_evicted_least_recently_used_first():
    pool = KVPool(KVConfig(prefix_caching=True, page_size=10, pool_tokens=60))
    a, b = words("a", 31), words("b", 31)  # 3 full pages each, 4 pages held while running
    run(pool, a)
    run(pool, b)  # needs 4 of the 6 pages: evicts a's last page, keeps the first two
    assert run(pool, a + ["x"])[0] == (20, 0)
    assert pool.used_pages == 0


def test_a_full_pool_refuses_admission_until_pages_are_released():
    pool = KVPool(KVConfig(prefix_caching=True, page_size=10, pool_tokens=50))
    h1 = Hold(page_hashes(words("a", 35), 10))
    assert pool.admit(h1, 35, count=True) == (0, 0)
    h2 = Hold(page_hashes(words("b", 35), 10))
    assert pool.admit(h2, 35, count=True) is None
    assert pool.usage == pytest.approx(4 / 5)
    assert pool.grow(h1, 50) and not pool.grow(h1, 51)
    pool.release(h1)
    assert pool.usage == 0 and pool.admit(h2, 35, count=True) == (0, 0)


def test_evicted_pages_go_to_the_cpu_tier_and_come_back_from_it():
    cfg = KVConfig(prefix_caching=True, page_size=10, pool_tokens=40, cpu_tokens=100,
                   kv_bytes_per_token=1000, offload_gbps=1.0)
    pool = KVPool(cfg)
    a = words("a", 31)
    run(pool, a)
    run(pool, words("b", 31))  # a's pages are pushed out to the CPU tier
    assert pool.pages_offloaded >= 3
    (gpu, cpu), _ = run(pool, a + ["more"] * 5)
    assert gpu + cpu == 30 and cpu > 0
    assert pool.external_hits == cpu and pool.external_queries == 31 + 31 + 36
    assert pool.load_seconds(cpu) == pytest.approx(cpu * 1000 / 1e9)


def test_the_cpu_tier_is_an_lru_of_its_own_size():
    pool = KVPool(KVConfig(prefix_caching=True, page_size=10, pool_tokens=40, cpu_tokens=30))
    for p in "abcd":
        run(pool, words(p, 31))
    assert pool.cpu_used_pages == 3
