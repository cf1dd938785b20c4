//! The little-endian byte writer and reader the checkpoint format is made of: integers,
//! floats as their IEEE bits, vectors, length-prefixed text and optional `u32`s. Read
//! errors are plain messages, wrapped with the path by `Checkpoint::from_bytes`.

use glam::DVec3;

/// The bytes written so far, appended in order.
#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub(super) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    pub(super) fn vec3(&mut self, v: DVec3) {
        self.f64(v.x);
        self.f64(v.y);
        self.f64(v.z);
    }
    pub(super) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub(super) fn opt_u32(&mut self, v: Option<u32>) {
        self.u8(u8::from(v.is_some()));
        self.u32(v.unwrap_or(0));
    }
}

/// A decoded value, or what was wrong with the bytes.
pub(super) type Decoded<T> = std::result::Result<T, String>;

/// A cursor over bytes being decoded.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "the data ends early (at byte {} of {}, {n} more needed)",
                    self.pos,
                    self.bytes.len()
                )
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(super) fn u8(&mut self) -> Decoded<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(super) fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(super) fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(super) fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    pub(super) fn vec3(&mut self) -> Decoded<DVec3> {
        Ok(DVec3::new(self.f64()?, self.f64()?, self.f64()?))
    }

    /// A count of items of `item_bytes` bytes each that must fit the remaining data.
    pub(super) fn count(&mut self, what: &str, item_bytes: usize) -> Decoded<usize> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n.saturating_mul(item_bytes as u64) > left {
            return Err(format!(
                "{n} {what} announced, but only {left} bytes of data are left"
            ));
        }
        Ok(n as usize)
    }

    pub(super) fn str(&mut self) -> Decoded<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|e| format!("text: {e}"))
    }

    pub(super) fn opt_u32(&mut self) -> Decoded<Option<u32>> {
        let some = self.u8()?;
        let v = self.u32()?;
        match some {
            0 => Ok(None),
            1 => Ok(Some(v)),
            other => Err(format!("option flag {other}")),
        }
    }

    pub(super) fn vec3s(&mut self, n: usize) -> Decoded<Vec<DVec3>> {
        (0..n).map(|_| self.vec3()).collect()
    }
    pub(super) fn f64s(&mut self, n: usize) -> Decoded<Vec<f64>> {
        (0..n).map(|_| self.f64()).collect()
    }
}
