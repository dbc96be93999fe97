"""``Store.transaction()``: the outer block commits, an inner one joins it, an exception in
either rolls everything back, a read-only one refuses writes and keeps nothing; a long job
commits as it goes through the handle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tracereplay.errors import StoreError
from tracereplay.store import Store
from tracereplay.store.errors import ReadOnlyTransactionError


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "tx.duckdb") as store:
        yield store


def _offset(store: Store, key: str, offset: int) -> None:
    store.set_spool_offset(key, offset)


def _keys(store: Store) -> list[str]:
    rows = store.con.execute("SELECT segment FROM spool_offsets ORDER BY segment").fetchall()
    return [r[0] for r in rows]


def _in_transaction(store: Store) -> bool:
    """Whether a transaction is open on the store's connection: outside one, every statement
    gets a transaction of its own."""
    first = store.con.execute("SELECT txid_current()").fetchall()
    return store.con.execute("SELECT txid_current()").fetchall() == first


def test_the_outer_block_commits(tmp_path: Path) -> None:
    with Store.open(tmp_path / "a.duckdb") as store:
        with store.transaction():
            _offset(store, "a", 1)
            assert _in_transaction(store)
        assert not _in_transaction(store)
    with Store.open(tmp_path / "a.duckdb") as store:
        assert _keys(store) == ["a"]


def test_an_inner_block_joins_the_outer_one(store: Store) -> None:
    with store.transaction():
        _offset(store, "a", 1)
        with store.transaction():
            _offset(store, "b", 1)
        # the inner block's end committed nothing: the outer transaction is still open
        assert _in_transaction(store)
        store.con.execute("CREATE TEMP TABLE seen AS SELECT 1")  # the same transaction goes on
    assert _keys(store) == ["a", "b"]


def test_an_exception_in_the_inner_block_rolls_back_all(store: Store) -> None:
    with pytest.raises(ValueError, match="inner"), store.transaction():
        _offset(store, "a", 1)
        with store.transaction():
            _offset(store, "b", 1)
            raise ValueError("inner")
    assert _keys(store) == []
    assert not _in_transaction(store)


def test_an_inner_failure_caught_outside_still_rolls_back_all(store: Store) -> None:
    with pytest.raises(StoreError, match="nested transaction failed"), store.transaction():
        _offset(store, "a", 1)
        try:
            with store.transaction():
                _offset(store, "b", 1)
                raise ValueError("inner")
        except ValueError:
            pass
    assert _keys(store) == []
    assert not _in_transaction(store)


def test_an_exception_in_the_outer_block_rolls_back(store: Store) -> None:
    with pytest.raises(ValueError), store.transaction():
        _offset(store, "a", 1)
        raise ValueError("outer")
    assert _keys(store) == []
    with store.transaction():  # and the store takes the next transaction
        _offset(store, "b", 1)
    assert _keys(store) == ["b"]


def test_read_only_refuses_writes_and_rolls_back(store: Store) -> None:
    with store.transaction():
        _offset(store, "a", 1)
    with store.transaction(read_only=True):
        assert _keys(store) == ["a"]
        with pytest.raises(ReadOnlyTransactionError, match="read-only"):
            _offset(store, "b", 1)
    assert not _in_transaction(store)
    # a read-only block is rolled back even when nothing failed: temporary work is gone
    with store.transaction(read_only=True):
        store.con.execute("CREATE TEMP TABLE scratch AS SELECT 1 AS x")
    assert store.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'scratch'"
    ).fetchall() == [(0,)]
    assert _keys(store) == ["a"]


def test_a_write_block_inside_a_read_only_one_is_refused_its_writes(store: Store) -> None:
    with store.transaction(read_only=True):
        inner = store.transaction()
        with pytest.raises(ReadOnlyTransactionError, match="read-only"), inner:
            _offset(store, "a", 1)
    assert _keys(store) == []


def test_read_only_cannot_open_inside_a_write_transaction(store: Store) -> None:
    with pytest.raises(StoreError, match="read-only"), store.transaction():
        _offset(store, "a", 1)
        with store.transaction(read_only=True):
            pass
    assert _keys(store) == []


def test_the_handle_commits_and_rolls_back_as_the_block_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    with Store.open(path) as store, pytest.raises(ValueError), store.transaction() as tx:
        _offset(store, "kept", 1)
        tx.commit()
        _offset(store, "dropped", 1)
        tx.rollback()
        assert _in_transaction(store)  # the block goes on in a new transaction
        _offset(store, "also kept", 1)
        tx.commit()
        _offset(store, "lost", 1)
        raise ValueError("stop")
    with Store.open(path) as store:
        assert _keys(store) == ["also kept", "kept"]


def test_only_the_outermost_write_block_commits_part_of_its_work(store: Store) -> None:
    with store.transaction(), store.transaction() as inner:
        with pytest.raises(StoreError, match="nested"):
            inner.commit()
        with pytest.raises(StoreError, match="nested"):
            inner.rollback()
    with store.transaction(read_only=True) as snapshot, pytest.raises(StoreError, match="read"):
        snapshot.commit()
