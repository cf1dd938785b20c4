//! Where particles are stored, apart from who they are (issue 44).
//!
//! A particle's id is permanent: scene order, then inserted spheres in insertion order.
//! Where a backend stores it is its own business: the CPU backend reorders its storage
//! along a space-filling curve at neighbour-list rebuilds (`[simulation] sort_every`),
//! so that partners near in space are near in memory. A [`Layout`] maps between the
//! two. Every boundary (outputs, checkpoints, faults, the Python API) speaks ids, and
//! every sum runs in an order fixed by ids, so results do not depend on the layout.

/// The slot of an id that is not stored ([`Layout::try_slot`]): a particle an inserter
/// has not inserted yet, or one that left the domain and left storage.
pub const NOT_STORED: u32 = u32::MAX;

/// A map between storage slots and particle ids: a permutation, or (a backend that
/// compacts its storage, issue 44 item 4) the stored ids of a larger set, each in one
/// slot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The id stored in each slot (`id[s]`); empty for the identity.
    id: Vec<u32>,
    /// The slot of each id (`slot[i]`, [`NOT_STORED`] for one not stored); empty for
    /// the identity.
    slot: Vec<u32>,
}

impl Layout {
    /// The identity: slot `s` holds id `s`.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Whether slot `s` holds id `s` for every `s`.
    #[inline]
    pub fn is_identity(&self) -> bool {
        self.id.is_empty()
    }

    /// The layout with `ids[s]` in slot `s` (a permutation of `0..ids.len()`), or
    /// `None` when `ids` is not one.
    pub fn from_ids(ids: Vec<u32>) -> Option<Self> {
        let mut slot = vec![u32::MAX; ids.len()];
        for (s, &i) in ids.iter().enumerate() {
            let at = slot.get_mut(i as usize)?;
            if *at != u32::MAX {
                return None;
            }
            *at = s as u32;
        }
        if ids.iter().enumerate().all(|(s, &i)| s as u32 == i) {
            return Some(Self::identity());
        }
        Some(Self { id: ids, slot })
    }

    /// The layout with `ids[s]` in slot `s`, some of the ids `0..id_count` (each at
    /// most once), or `None` when an id repeats or is out of range. All of them in
    /// order is the identity.
    pub fn from_stored(ids: Vec<u32>, id_count: usize) -> Option<Self> {
        if ids.len() == id_count {
            return Self::from_ids(ids);
        }
        let mut slot = vec![NOT_STORED; id_count];
        for (s, &i) in ids.iter().enumerate() {
            let at = slot.get_mut(i as usize)?;
            if *at != NOT_STORED {
                return None;
            }
            *at = s as u32;
        }
        Some(Self { id: ids, slot })
    }

    /// Whether some ids are not stored.
    pub fn has_holes(&self) -> bool {
        self.slot.len() != self.id.len()
    }

    /// The slot of id `i`, `None` when it is not stored (`n`: the slots, which the
    /// identity needs to tell).
    #[inline]
    pub fn try_slot(&self, i: usize, n: usize) -> Option<usize> {
        if self.slot.is_empty() {
            (i < n).then_some(i)
        } else {
            match self.slot.get(i) {
                Some(&s) if s != NOT_STORED => Some(s as usize),
                _ => None,
            }
        }
    }

    /// The ids this layout maps (`n`: the slots, the identity's count).
    pub fn id_count(&self, n: usize) -> usize {
        if self.slot.is_empty() {
            n
        } else {
            self.slot.len()
        }
    }

    /// The id in slot `s`.
    #[inline]
    pub fn id(&self, s: usize) -> usize {
        if self.id.is_empty() {
            s
        } else {
            self.id[s] as usize
        }
    }

    /// The slot of id `i` (a stored one: [`NOT_STORED`] as `usize` otherwise).
    #[inline]
    pub fn slot(&self, i: usize) -> usize {
        if self.slot.is_empty() {
            i
        } else {
            self.slot[i] as usize
        }
    }

    /// The ids by slot (`0..n` for the identity).
    pub fn ids(&self, n: usize) -> Vec<u32> {
        if self.id.is_empty() {
            (0..n as u32).collect()
        } else {
            self.id.clone()
        }
    }

    /// The storage-to-id table itself (empty for the identity): what a neighbour list
    /// orders its rows by.
    pub fn id_table(&self) -> &[u32] {
        &self.id
    }

    /// The slots of the ids `0..n` in ascending id, those stored: the order of every
    /// global sum (every id: `n` = [`Layout::id_count`]).
    pub fn slots_by_id(&self, n: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        if self.slot.is_empty() {
            Box::new(0..n)
        } else {
            Box::new(
                (self.slot[..n.min(self.slot.len())].iter())
                    .filter(|&&s| s != NOT_STORED)
                    .map(|&s| s as usize),
            )
        }
    }

    /// The stored ids with their slots, ascending by id (of the `n` slots).
    pub fn ids_and_slots(&self, n: usize) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        if self.slot.is_empty() {
            Box::new((0..n).map(|i| (i, i)))
        } else {
            Box::new(
                (self.slot.iter().enumerate())
                    .filter(|(_, s)| **s != NOT_STORED)
                    .map(|(i, s)| (i, *s as usize)),
            )
        }
    }

    /// `by_slot` (rows of `stride` items per slot) in id order: a row per id, `fill`
    /// for the ids not stored.
    pub fn to_ids_filled<T: Clone>(&self, by_slot: &[T], stride: usize, fill: T) -> Vec<T> {
        if self.is_identity() || stride == 0 {
            return by_slot.to_vec();
        }
        let n = by_slot.len() / stride;
        let mut out = Vec::with_capacity(self.id_count(n) * stride);
        for s in &self.slot {
            if *s == NOT_STORED {
                out.extend(std::iter::repeat(fill.clone()).take(stride));
            } else {
                let s = *s as usize;
                out.extend_from_slice(&by_slot[s * stride..(s + 1) * stride]);
            }
        }
        out
    }

    /// `by_slot` (rows of `stride` items per slot) in id order (a permutation: every
    /// id stored; see [`Layout::to_ids_filled`] otherwise).
    pub fn to_ids<T: Clone>(&self, by_slot: &[T], stride: usize) -> Vec<T> {
        if self.is_identity() || stride == 0 {
            return by_slot.to_vec();
        }
        let mut out = Vec::with_capacity(by_slot.len());
        for s in self.slots_by_id(by_slot.len() / stride) {
            out.extend_from_slice(&by_slot[s * stride..(s + 1) * stride]);
        }
        out
    }

    /// `by_id` (rows of `stride` items per id) in slot order.
    pub fn to_slots<T: Clone>(&self, by_id: &[T], stride: usize) -> Vec<T> {
        if self.is_identity() || stride == 0 {
            return by_id.to_vec();
        }
        let mut out = Vec::with_capacity(self.id.len() * stride);
        for s in 0..self.id.len() {
            let i = self.id(s);
            out.extend_from_slice(&by_id[i * stride..(i + 1) * stride]);
        }
        out
    }

    /// [`Layout::to_ids`] taking its rows by value: the identity hands them back as
    /// they are, without a copy (the GPU's read-backs).
    pub fn into_ids<T: Clone>(&self, by_slot: Vec<T>, stride: usize) -> Vec<T> {
        if self.is_identity() {
            by_slot
        } else {
            self.to_ids(&by_slot, stride)
        }
    }

    /// [`Layout::to_slots`] borrowing where it can: the identity lends `by_id` itself.
    pub fn slots_of<'a, T: Clone>(
        &self,
        by_id: &'a [T],
        stride: usize,
    ) -> std::borrow::Cow<'a, [T]> {
        if self.is_identity() {
            std::borrow::Cow::Borrowed(by_id)
        } else {
            std::borrow::Cow::Owned(self.to_slots(by_id, stride))
        }
    }

    /// This layout after moving the particle of old slot `order[s]` to slot `s`.
    pub fn reordered(&self, order: &[u32]) -> Self {
        let ids = order.iter().map(|&o| self.id(o as usize) as u32).collect();
        Self::from_ids(ids).expect("a reordering of a permutation is a permutation")
    }

    /// This layout (of `n` slots) after keeping the particles of old slots `order`,
    /// old slot `order[s]` in slot `s` (each at most once): the ones left out are no
    /// longer stored.
    pub fn kept(&self, order: &[u32], n: usize) -> Self {
        let ids = order.iter().map(|&o| self.id(o as usize) as u32).collect();
        Self::from_stored(ids, self.id_count(n))
            .expect("old slots, each kept at most once, hold distinct ids")
    }

    /// This layout (of `n` slots) with `ids` (not stored yet) stored after its slots.
    pub fn appended(&self, ids: &[u32], n: usize) -> Self {
        let mut all = self.ids(n);
        all.extend_from_slice(ids);
        Self::from_stored(all, self.id_count(n)).expect("the appended ids were not stored")
    }
}

/// Whether a run of `model` with `integrator` compacts its storage (issue 44): an open
/// system (inserters, or removal at the domain's faces) without clumps (whose spheres
/// keep their slots), under any integrator but the trapezoidal one. Then storage holds
/// the particles in the system; the others live in an archive by id. (The GPU's hard
/// contacts keep full storage: [`gpu_compacts`].)
pub fn compacts(model: &super::Model, integrator: super::IntegratorKind) -> bool {
    use super::IntegratorKind;
    let open = !model.inserters.is_empty() || model.domain.is_some_and(|d| d.remove);
    open && model.clumps.is_empty() && integrator != IntegratorKind::CampelloTrapezoidal
}

/// Whether the GPU backend compacts a run of `model` ([`compacts`]): not with hard
/// contacts, whose device solver keys walls after the slots and keeps its warm starts
/// per slot.
pub fn gpu_compacts(model: &super::Model, integrator: super::IntegratorKind) -> bool {
    let hard = matches!(
        model.contact.map(|c| c.law),
        Some(super::ContactLaw::Hard(_))
    );
    compacts(model, integrator) && !hard
}

/// Whether the particle of `flags` is out of the system: reserved and not inserted, or
/// removed. `bonded`: it has bonds (a removed bonded particle keeps its slot: its bonds
/// still pull on their other ends).
pub fn out_of_system(flags: u32, bonded: bool) -> bool {
    super::is_dormant(flags) || (flags & super::FLAG_REMOVED != 0 && !bonded)
}

/// Whether each particle of `model` (by id) has a bond.
pub fn bonded_ids(model: &super::Model) -> Vec<bool> {
    let mut bonded = vec![false; model.particles.len()];
    for b in &model.bonds {
        bonded[b.i as usize] = true;
        bonded[b.j as usize] = true;
    }
    bonded
}

/// Rows of `stride` items per slot of `v` (`n` slots) gathered so that new slot `s`
/// holds old slot `order[s]`'s row: a permutation, or (fewer) the rows kept. An empty
/// `v` (an array the run does not use) stays empty; one of another length is left as
/// it is.
pub fn gather_rows<T: Clone>(v: &mut Vec<T>, order: &[u32], stride: usize, n: usize) {
    if stride == 0 || v.len() != n * stride || v.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(order.len() * stride);
    for &o in order {
        let o = o as usize;
        out.extend_from_slice(&v[o * stride..(o + 1) * stride]);
    }
    *v = out;
}

/// Rows of `stride` items per slot of `v` rearranged so that new slot `s` holds old
/// slot `order[s]`'s row (`order` a permutation of the slots).
pub fn permute_rows<T: Clone>(v: &mut Vec<T>, order: &[u32], stride: usize) {
    if stride == 0 || v.len() != order.len() * stride {
        return;
    }
    let mut out = Vec::with_capacity(v.len());
    for &o in order {
        let o = o as usize;
        out.extend_from_slice(&v[o * stride..(o + 1) * stride]);
    }
    *v = out;
}

/// One dispatch of the GPU's storage permutation (`permute_slots` in
/// `shaders/storage.wgsl`, `struct Permute` there; the CPU twin is
/// `cpu::permute_slots`): the slots `dst_first .. dst_first + dst_count` of a
/// destination take the records of their old slots that a source holding the slots
/// `src_first .. src_first + src_count` has, `stride` words each, from the section
/// starting at word `src_offset` to the one at `dst_offset`. `remap` 1 marks neighbour
/// rows (a count, then slots), whose entries become the partners' new slots.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Permute {
    /// First slot the dispatch writes.
    pub dst_first: u32,
    /// Slots it writes.
    pub dst_count: u32,
    /// First slot the source holds.
    pub src_first: u32,
    /// Slots the source holds.
    pub src_count: u32,
    /// First word of the section in the destination.
    pub dst_offset: u32,
    /// First word of the section in the source.
    pub src_offset: u32,
    /// Words per slot.
    pub stride: u32,
    /// 1: neighbour rows, whose entries are remapped.
    pub remap: u32,
    /// Slots in all (each half of the order table).
    pub n: u32,
    /// Padding (uniform blocks are 16-byte multiples).
    pub pad: [u32; 3],
}

/// A seeded random order of the slots `0..n` in which the first `sortable` are shuffled
/// (a xorshift Fisher–Yates) and the rest keep their places: the `order` of
/// [`permute_rows`] with which the storage-independence tests store a scene at random
/// (`tests/storage_order.rs`, `tests/gpu_storage_order.rs`).
pub fn shuffled_order(n: usize, sortable: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut s = seed | 1;
    for k in (1..sortable.min(n)).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        order.swap(k, (s % (k as u64 + 1)) as usize);
    }
    order
}

/// The order storage is sorted in (`VARIDEM_SORT_CURVE`, for measuring one against the
/// other; the default is [`Curve::Cells`], the faster on the CPU backend).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    /// Cells of the neighbour grid's edge in z, then y, then x order (slabs one cell
    /// thick, rows within them): the cells a particle's partners sit in are its own
    /// row's neighbours and the rows just before and after in y and z.
    Cells,
    /// The Morton (Z-order) curve over the same cells.
    Morton,
    /// No curve: a random order, a new one at each sort (seeded by the positions), so
    /// that every sort moves every particle. For measuring what a sort's moves cost
    /// (a settled bed's sorts move nothing) and for showing that results do not
    /// depend on storage; it scatters partners through memory.
    Random,
}

impl Curve {
    /// The curve `VARIDEM_SORT_CURVE` names (`cells`, `morton` or `random`), else the
    /// default.
    pub fn from_env() -> Self {
        match std::env::var("VARIDEM_SORT_CURVE").as_deref() {
            Ok("morton") => Self::Morton,
            Ok("random") => Self::Random,
            _ => Self::Cells,
        }
    }
}

/// Bits of an axis in a sort key (2²¹ cells).
const AXIS_BITS: u32 = 21;

/// `v` with two zero bits after each of its low 21 bits (Morton interleaving).
#[inline]
fn spread(v: u64) -> u64 {
    let mut b = v & 0x1f_ffff;
    b = (b | (b << 32)) & 0x1f_0000_0000_ffff;
    b = (b | (b << 16)) & 0x1f_0000_ff00_00ff;
    b = (b | (b << 8)) & 0x100f_00f0_0f00_f00f;
    b = (b | (b << 4)) & 0x10c3_0c30_c30c_30c3;
    (b | (b << 2)) & 0x1249_2492_4924_9249
}

/// The slots `0..position.len()` ordered along `curve` over cells of edge `cell` from
/// the bounding box of the first `sortable` of them (the rest keep their slots, after),
/// ties in slot order: the `order` of [`permute_rows`] for a spatial sort.
pub fn spatial_order(
    position: &[glam::DVec3],
    sortable: usize,
    cell: f64,
    curve: Curve,
) -> Vec<u32> {
    let head = &position[..sortable.min(position.len())];
    if curve == Curve::Random {
        // A seed from the positions' bits: another order at every sort.
        let seed = (head.iter().take(64)).fold(position.len() as u64, |h, x| {
            (h ^ x.x.to_bits() ^ x.y.to_bits().rotate_left(21) ^ x.z.to_bits().rotate_left(42))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        });
        return shuffled_order(position.len(), head.len(), seed);
    }
    let lo = head
        .iter()
        .filter(|x| x.is_finite())
        .fold(glam::DVec3::INFINITY, |lo, x| lo.min(*x));
    let inv = if cell > 0.0 && cell.is_finite() {
        1.0 / cell
    } else {
        0.0
    };
    let max = ((1u64 << AXIS_BITS) - 1) as f64;
    // NaN and far-out values clamp (a blown-up particle sorts to an end).
    let axis = |v: f64, o: f64| -> u64 {
        let c = ((v - o) * inv).floor();
        if c.is_nan() {
            max as u64
        } else {
            c.clamp(0.0, max) as u64
        }
    };
    let key = |x: &glam::DVec3| -> u64 {
        let (cx, cy, cz) = (axis(x.x, lo.x), axis(x.y, lo.y), axis(x.z, lo.z));
        match curve {
            Curve::Cells => (cz << (2 * AXIS_BITS)) | (cy << AXIS_BITS) | cx,
            Curve::Morton => spread(cx) | (spread(cy) << 1) | (spread(cz) << 2),
            Curve::Random => 0,
        }
    };
    let mut order = if curve == Curve::Cells {
        let cells: Vec<[u64; 3]> = (head.iter())
            .map(|x| [axis(x.x, lo.x), axis(x.y, lo.y), axis(x.z, lo.z)])
            .collect();
        counting_order(&cells).unwrap_or_else(|| sorted_by_key(head, key))
    } else {
        sorted_by_key(head, key)
    };
    order.extend(head.len() as u32..position.len() as u32);
    order
}

/// The slots of `head` ordered by `key`, ties in slot order.
fn sorted_by_key(head: &[glam::DVec3], key: impl Fn(&glam::DVec3) -> u64) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = head
        .iter()
        .enumerate()
        .map(|(s, x)| (key(x), s as u32))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, s)| s).collect()
}

/// The slots ordered by cell (`[cx, cy, cz]` each), in z, then y, then x order, ties in
/// slot order, by a counting sort over the cells of their bounding box: the order of
/// [`Curve::Cells`]' keys, sorted in O(slots + cells). `None` when the box has more
/// than 4 cells a slot (particles far apart), where a comparison sort is cheaper.
fn counting_order(cells: &[[u64; 3]]) -> Option<Vec<u32>> {
    let dims = cells.iter().fold([0u64; 3], |d, c| {
        [d[0].max(c[0] + 1), d[1].max(c[1] + 1), d[2].max(c[2] + 1)]
    });
    let total = dims[0].checked_mul(dims[1])?.checked_mul(dims[2])?;
    if total > 4 * cells.len() as u64 + 1024 {
        return None;
    }
    let index = |c: &[u64; 3]| ((c[2] * dims[1] + c[1]) * dims[0] + c[0]) as usize;
    let mut start = vec![0u32; total as usize + 1];
    for c in cells {
        start[index(c) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut order = vec![0u32; cells.len()];
    for (s, c) in cells.iter().enumerate() {
        let at = &mut start[index(c)];
        order[*at as usize] = s as u32;
        *at += 1;
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn layouts_map_both_ways() {
        let l = Layout::from_ids(vec![2, 0, 1]).unwrap();
        assert_eq!((l.id(0), l.slot(2), l.slot(0)), (2, 0, 1));
        assert_eq!(l.to_ids(&[20, 0, 10], 1), [0, 10, 20]);
        assert_eq!(l.to_slots(&[0, 10, 20], 1), [20, 0, 10]);
        assert_eq!(l.to_ids(&[2, 2, 0, 0, 1, 1], 2), [0, 0, 1, 1, 2, 2]);
        assert_eq!(l.into_ids(vec![20, 0, 10], 1), [0, 10, 20]);
        assert_eq!(&*l.slots_of(&[0, 10, 20], 1), [20, 0, 10]);
        let id = Layout::identity();
        assert!(matches!(
            id.slots_of(&[1, 2], 1),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(id.into_ids(vec![3, 1], 1), [3, 1]);
        assert!(Layout::from_ids(vec![0, 1, 2]).unwrap().is_identity());
        assert!(Layout::from_ids(vec![0, 0]).is_none());
        assert!(Layout::from_ids(vec![0, 5]).is_none());
        // Moving old slot 2 to the front, then old slot 0, then 1.
        let r = l.reordered(&[2, 0, 1]);
        assert_eq!(r.ids(3), [1, 2, 0]);
        let mut v = vec!['a', 'b', 'c'];
        permute_rows(&mut v, &[2, 0, 1], 1);
        assert_eq!(v, ['c', 'a', 'b']);
    }

    /// A layout that stores some of the ids: slots by id skip the others, rows by id
    /// fill them, keeping fewer and appending more move ids as stated.
    #[test]
    fn layouts_with_holes_map_the_stored_ids() {
        assert!(Layout::from_stored(vec![0, 1, 2], 3).unwrap().is_identity());
        assert!(Layout::from_stored(vec![1, 1], 3).is_none());
        assert!(Layout::from_stored(vec![4], 3).is_none());
        let l = Layout::from_stored(vec![3, 0], 5).unwrap();
        assert!(l.has_holes() && !l.is_identity());
        assert_eq!(
            (l.id_count(2), l.try_slot(3, 2), l.try_slot(1, 2)),
            (5, Some(0), None)
        );
        assert_eq!(l.slots_by_id(5).collect::<Vec<_>>(), [1, 0]);
        assert_eq!(l.slots_by_id(2).collect::<Vec<_>>(), [1]);
        assert_eq!(l.ids_and_slots(2).collect::<Vec<_>>(), [(0, 1), (3, 0)]);
        assert_eq!(l.to_ids_filled(&[30, 0], 1, -1), [0, -1, -1, 30, -1]);
        assert_eq!(l.to_slots(&[0, 10, 20, 30, 40], 1), [30, 0]);
        let kept = l.kept(&[1], 2);
        assert_eq!((kept.ids(1), kept.try_slot(3, 1)), (vec![0], None));
        let grown = kept.appended(&[4, 2], 1);
        assert_eq!(grown.ids(3), [0, 4, 2]);
        assert_eq!(grown.slot(2), 2);
        let mut v = vec![1, 2, 3, 4, 5, 6];
        gather_rows(&mut v, &[2, 0], 2, 3);
        assert_eq!(v, [5, 6, 1, 2]);
        let mut empty: Vec<u8> = Vec::new();
        gather_rows(&mut empty, &[0], 1, 3);
        assert!(empty.is_empty());
    }

    /// The counting sort over cells gives the order of the comparison sort of the
    /// cell keys (ties in slot order), on a packed cloud and on one with outliers (the
    /// comparison sort's fallback); the random curve is a permutation that moves the
    /// sortable slots and keeps the rest.
    #[test]
    fn the_cell_orders_agree_and_random_is_a_permutation() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut r = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut packed: Vec<glam::DVec3> = (0..5000)
            .map(|_| glam::DVec3::new(r(), r(), 0.5 * r()) * 0.05)
            .collect();
        let edge = 0.0022;
        let key = |x: &glam::DVec3, lo: glam::DVec3| -> u64 {
            let c = ((*x - lo) / edge).floor();
            ((c.z as u64) << (2 * AXIS_BITS)) | ((c.y as u64) << AXIS_BITS) | c.x as u64
        };
        for outliers in [false, true] {
            if outliers {
                packed[17] = glam::DVec3::splat(40.0);
                packed[3001] = glam::DVec3::splat(-40.0);
            }
            let mut got = spatial_order(&packed, 4990, edge, Curve::Cells);
            let tail = got.split_off(4990);
            assert_eq!(tail, (4990..5000).collect::<Vec<u32>>());
            // The expected order of the first 4990 alone (the bounding box is theirs).
            let lo = packed[..4990]
                .iter()
                .fold(glam::DVec3::INFINITY, |a, x| a.min(*x));
            let mut keyed: Vec<(u64, u32)> = (packed[..4990].iter().enumerate())
                .map(|(s, x)| (key(x, lo), s as u32))
                .collect();
            keyed.sort_unstable();
            let head_expected: Vec<u32> = keyed.iter().map(|k| k.1).collect();
            assert_eq!(got, head_expected, "outliers {outliers}");
        }
        let random = spatial_order(&packed, 4990, edge, Curve::Random);
        let mut sorted = random.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..5000).collect::<Vec<u32>>());
        assert_eq!(&random[4990..], &(4990..5000).collect::<Vec<u32>>()[..]);
        assert!(
            random
                .iter()
                .enumerate()
                .filter(|(s, &o)| *s as u32 != o)
                .count()
                > 4900
        );
    }

    /// Points along a line in reverse come out in space order on both curves; the
    /// unsorted tail stays; cells order z before y before x; NaN sorts last.
    #[test]
    fn spatial_order_follows_space() {
        let pos: Vec<DVec3> = (0..10)
            .map(|k| DVec3::new(9.0 - k as f64, 0.0, 0.0))
            .collect();
        for curve in [Curve::Cells, Curve::Morton] {
            let order = spatial_order(&pos, 8, 1.0, curve);
            assert_eq!(order, [7, 6, 5, 4, 3, 2, 1, 0, 8, 9], "{curve:?}");
            let mut nan = pos.clone();
            nan[3] = DVec3::NAN;
            let order = spatial_order(&nan, 10, 1.0, curve);
            assert_eq!(order.len(), 10);
            assert_eq!(order[9], 3, "{curve:?}");
        }
        let slab = [
            DVec3::new(5.0, 0.0, 1.0),
            DVec3::new(0.0, 5.0, 0.0),
            DVec3::ZERO,
        ];
        assert_eq!(spatial_order(&slab, 3, 1.0, Curve::Cells), [2, 1, 0]);
        assert_eq!(spread(0b101), 0b1_000_001);
    }
}
