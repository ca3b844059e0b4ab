//! Images out: RGBA8 pixels to PNG with the `png` crate.

/// Encodes `width × height` RGBA8 pixels (rows top to bottom) as a PNG file.
///
/// # Panics
/// When `rgba.len() != width × height × 4`.
#[must_use]
pub fn png(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    assert_eq!(rgba.len(), width as usize * height as usize * 4, "RGBA8 pixels for {width}x{height}");
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("writing to a Vec cannot fail");
        writer.write_image_data(rgba).expect("the pixel count was checked");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn png_round_trips() {
        let rgba: Vec<u8> = (0..4 * 3 * 4).map(|i| (i * 7) as u8).collect();
        let bytes = super::png(4, 3, &rgba);
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (4, 3));
        assert_eq!(&buf[..info.buffer_size()], &rgba[..]);
    }
}
