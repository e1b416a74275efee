//! Grid geometry the games share: the four neighbours of a cell on a
//! row-major board, bounded ([`Grid`]) or wrapping at the edges
//! ([`wrapped_neighbours`]), Manhattan distance, and breadth-first
//! distances from a set of sources in buffers the caller reuses
//! ([`bfs`], [`search`]).
//!
//! A cell is its row-major index `row * width + col`. Neighbours always
//! come up, down, left, right (the generals protocol's direction order); a
//! game that walks them in another order reorders them itself, since the
//! order decides which of equal paths a search keeps.
//!
//! These are the games' hot paths: everything small is `#[inline]`, and
//! searches write into buffers the caller keeps from search to search.

/// The distance of a cell a search did not reach.
pub const UNREACHABLE: u32 = u32::MAX;

/// A board without wrap: `cells` cells in rows of `width`. The last row may
/// be short, for views cut to the cells they hold; [`Grid::new`] boards are
/// whole rectangles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grid {
    width: usize,
    cells: usize,
}

impl Grid {
    /// A `width × height` board.
    #[inline]
    pub const fn new(width: usize, height: usize) -> Grid {
        Grid {
            width,
            cells: width * height,
        }
    }

    /// The first `cells` cells of a board `width` wide; the last row is
    /// short when `cells` is not a multiple of `width`.
    #[inline]
    pub const fn ragged(width: usize, cells: usize) -> Grid {
        Grid { width, cells }
    }

    #[inline]
    pub const fn width(self) -> usize {
        self.width
    }

    /// Cells on the board.
    #[inline]
    pub const fn cells(self) -> usize {
        self.cells
    }

    /// The orthogonal neighbours of `cell` (which must be on the board, so
    /// `width > 0`): up, down, left, right, `None` where that step leaves
    /// the board.
    #[inline]
    pub fn neighbours(self, cell: usize) -> [Option<usize>; 4] {
        let (w, col) = (self.width, cell % self.width);
        [
            cell.checked_sub(w),
            Some(cell + w).filter(|&j| j < self.cells),
            (col > 0).then(|| cell - 1),
            (col + 1 < w && cell + 1 < self.cells).then(|| cell + 1),
        ]
    }

    /// The neighbour of `cell` in direction `dir` (0 up, 1 down, 2 left,
    /// 3 right), if on the board.
    #[inline]
    pub fn step(self, cell: usize, dir: usize) -> Option<usize> {
        self.neighbours(cell).get(dir).copied().flatten()
    }

    /// Orthogonal steps between two cells, ignoring what lies between.
    #[inline]
    pub fn manhattan(self, a: usize, b: usize) -> usize {
        let w = self.width;
        manhattan((a / w, a % w), (b / w, b % w))
    }
}

/// Orthogonal steps between `(row, col)` positions.
#[inline]
pub fn manhattan(a: (usize, usize), b: (usize, usize)) -> usize {
    a.0.abs_diff(b.0) + a.1.abs_diff(b.1)
}

/// The four neighbours of `cell` on a `width × height` board whose edges
/// wrap round (`cell < width × height`): up, down, left, right. On a board
/// one cell wide or high a neighbour can be `cell` itself.
#[inline]
pub fn wrapped_neighbours(width: usize, height: usize, cell: usize) -> [usize; 4] {
    // `x` reduced into `0..n`, for `x < 2n`: a compare, not a division.
    let wrap = |x: usize, n: usize| if x >= n { x - n } else { x };
    let (cells, col) = (width * height, cell % width);
    let row_start = cell - col;
    [
        wrap(cell + cells - width, cells),
        wrap(cell + width, cells),
        row_start + wrap(col + width - 1, width),
        row_start + wrap(col + 1, width),
    ]
}

/// A board shape a search can walk.
pub trait Topology: Copy {
    /// Cells on the board: the indices `0..cells()`.
    fn cells(self) -> usize;
    /// Calls `visit` with each neighbour of `cell` (`cell < cells()`), in
    /// the module's order.
    fn for_each_neighbour(self, cell: usize, visit: impl FnMut(usize));
}

impl Topology for Grid {
    #[inline]
    fn cells(self) -> usize {
        self.cells
    }

    // Spelled out rather than walking `neighbours`: this is the inner loop
    // of every search, and the branches beat an iterator over options.
    #[inline]
    fn for_each_neighbour(self, cell: usize, mut visit: impl FnMut(usize)) {
        let (w, col) = (self.width, cell % self.width);
        if cell >= w {
            visit(cell - w);
        }
        if cell + w < self.cells {
            visit(cell + w);
        }
        if col > 0 {
            visit(cell - 1);
        }
        if col + 1 < w && cell + 1 < self.cells {
            visit(cell + 1);
        }
    }
}

/// Breadth-first distances over `board` from `sources` (at distance 0
/// whatever `enter` says of them; repeats and cells off the board are
/// skipped), entering only cells for which `enter` holds, out to `limit`
/// steps. Returns `n`, how many cells it reached; they are `queue[..n]`,
/// sources first, in the order reached. `enter` must be a pure test: it is
/// asked about every neighbour of a reached cell, reached or not.
///
/// `dist` must be `board.cells()` long and [`UNREACHABLE`] everywhere
/// (fresh, or reset by the caller, which may reset just the cells the last
/// search reached). `queue` is grown to `board.cells()` entries if shorter
/// and never shrunk: a fixed buffer indexed directly, which is measurably
/// faster than pushing.
#[inline]
pub fn search<T: Topology>(
    board: T,
    sources: impl IntoIterator<Item = usize>,
    enter: impl Fn(usize) -> bool,
    limit: u32,
    dist: &mut [u32],
    queue: &mut Vec<usize>,
) -> usize {
    let cells = board.cells();
    if queue.len() < cells {
        queue.resize(cells, 0);
    }
    // Each cell enters at most once, so `cells` entries always suffice.
    let queue = queue.as_mut_slice();
    let mut tail = 0;
    for source in sources {
        if source < cells && dist[source] == UNREACHABLE {
            dist[source] = 0;
            queue[tail] = source;
            tail += 1;
        }
    }
    let mut head = 0;
    while head < tail {
        let cell = queue[head];
        head += 1;
        let next = dist[cell] + 1;
        if next > limit {
            continue;
        }
        // `enter` first: on the generators' boards that order measured a
        // few per cent faster (and `enter` is a pure test, so it may run on
        // cells already reached).
        board.for_each_neighbour(cell, |n| {
            if enter(n) && dist[n] == UNREACHABLE {
                dist[n] = next;
                queue[tail] = n;
                tail += 1;
            }
        });
    }
    tail
}

/// [`search`] into `dist` after resizing it to the board and setting it to
/// [`UNREACHABLE`] everywhere: buffers reused from search to search.
#[inline]
pub fn bfs<T: Topology>(
    board: T,
    sources: impl IntoIterator<Item = usize>,
    enter: impl Fn(usize) -> bool,
    limit: u32,
    dist: &mut Vec<u32>,
    queue: &mut Vec<usize>,
) -> usize {
    dist.clear();
    dist.resize(board.cells(), UNREACHABLE);
    search(board, sources, enter, limit, dist, queue)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_stop_at_the_edges() {
        let g = Grid::new(3, 2);
        assert_eq!(g.neighbours(0), [None, Some(3), None, Some(1)]);
        assert_eq!(g.neighbours(4), [Some(1), None, Some(3), Some(5)]);
        assert_eq!(g.step(5, 0), Some(2));
        assert_eq!(g.step(5, 3), None);
        // A short last row: cell 4 of 5 in rows of 3 has no right neighbour.
        let ragged = Grid::ragged(3, 5);
        assert_eq!(ragged.neighbours(4), [Some(1), None, Some(3), None]);
        assert_eq!(ragged.neighbours(2), [None, None, Some(1), None]);
    }

    #[test]
    fn wrapped_neighbours_come_round() {
        assert_eq!(wrapped_neighbours(3, 2, 0), [3, 3, 2, 1]);
        assert_eq!(wrapped_neighbours(3, 2, 5), [2, 2, 4, 3]);
        assert_eq!(wrapped_neighbours(1, 1, 0), [0; 4]);
    }

    #[test]
    fn manhattan_counts_orthogonal_steps() {
        assert_eq!(Grid::new(4, 4).manhattan(0, 15), 6);
        assert_eq!(manhattan((2, 0), (0, 3)), 5);
    }

    #[test]
    fn bfs_respects_walls_limits_and_sources() {
        // . # .
        // . # .
        // . . .
        let wall = [false, true, false, false, true, false, false, false, false];
        let g = Grid::new(3, 3);
        let (mut dist, mut queue) = (Vec::new(), Vec::new());
        let open = |c: usize| !wall[c];
        assert_eq!(bfs(g, [0], open, UNREACHABLE, &mut dist, &mut queue), 7);
        assert_eq!(
            (dist[2], dist[1], queue[0], queue[6]),
            (6, UNREACHABLE, 0, 2)
        );
        assert_eq!(bfs(g, [2, 2, 9], open, 1, &mut dist, &mut queue), 2);
        assert_eq!((dist[0], dist[5]), (UNREACHABLE, 1));
        // Sources count whatever `enter` says of them.
        assert_eq!(
            bfs(g, [1], |_| false, UNREACHABLE, &mut dist, &mut queue),
            1
        );
    }
}
