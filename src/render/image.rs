//! The picture: RGBA8 pixels, written as PNG, and averaged down from a supersampled
//! rendering in linear light.

use std::path::Path;

use super::colormap::{to_linear, to_srgb};
use crate::error::{Error, Result};

/// An RGBA8 (sRGB) picture, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width (pixels).
    pub width: u32,
    /// Height (pixels).
    pub height: u32,
    /// `4 × width × height` bytes.
    pub rgba: Vec<u8>,
}

impl Image {
    /// The RGB of pixel `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let k = 4 * (y as usize * self.width as usize + x as usize);
        [self.rgba[k], self.rgba[k + 1], self.rgba[k + 2]]
    }

    /// Writes the picture as an 8-bit RGBA PNG.
    pub fn save_png(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        let png_err = |e: png::EncodingError| Error::io(path, std::io::Error::other(e));
        let mut writer = encoder.write_header().map_err(png_err)?;
        writer.write_image_data(&self.rgba).map_err(png_err)?;
        writer.finish().map_err(png_err)
    }
}

/// Averages `factor × factor` blocks of `image` in linear light.
pub(super) fn downsample(image: &Image, factor: u32) -> Image {
    if factor == 1 {
        return image.clone();
    }
    let (w, h) = (image.width / factor, image.height / factor);
    let lut: Vec<f64> = (0..=255u8).map(to_linear).collect();
    let n = f64::from(factor * factor);
    let mut rgba = Vec::with_capacity(4 * (w * h) as usize);
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0.0f64; 3];
            for dy in 0..factor {
                for dx in 0..factor {
                    let p = image.pixel(x * factor + dx, y * factor + dy);
                    for c in 0..3 {
                        sum[c] += lut[usize::from(p[c])];
                    }
                }
            }
            rgba.extend(sum.map(|s| to_srgb(s / n)));
            rgba.push(255);
        }
    }
    Image {
        width: w,
        height: h,
        rgba,
    }
}
