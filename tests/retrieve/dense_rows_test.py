import numpy as np

from kbsearch.retrieve.dense_rows import RowCache


def _reader(table: dict[int, np.ndarray], calls: list[list[int]]):  # noqa: ANN202
    def read(row_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append([int(r) for r in row_ids])
        found = [int(r) for r in row_ids if int(r) in table]
        vectors = np.stack([table[r] for r in found]) if found else np.zeros((0, 2), np.float32)
        return np.array(found, dtype=np.int64), vectors

    return read


def test_row_cache_reads_a_row_once_and_answers_as_the_reader() -> None:
    table = {i: np.array([i, -i], dtype=np.float32) for i in range(1, 6)}
    calls: list[list[int]] = []
    cache = RowCache(_reader(table, calls), size=4)
    ids, vectors = cache(np.array([1, 3, 9]))
    assert ids.tolist() == [1, 3] and vectors.tolist() == [[1, -1], [3, -3]]
    ids, vectors = cache(np.array([1, 3]))
    assert ids.tolist() == [1, 3] and calls == [[1, 3, 9]]  # the second call read nothing
    cache(np.array([2, 4, 5]))  # over the size: starts over with the rows just read
    ids, _ = cache(np.array([2, 4, 5]))
    assert ids.tolist() == [2, 4, 5] and calls[-1] == [2, 4, 5] and len(calls) == 2
