package attachment

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif"  // image.DecodeConfig reads GIF
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG

	_ "golang.org/x/image/webp" // and WebP
)

// readImage reads an image's header: ok reports that data is an image of a format
// registered above; the error says it is over the bounds.
func readImage(data []byte, lim Limits) (f File, ok bool, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return File{}, false, nil
	}
	f = File{Kind: KindImage, Format: format, MIME: "image/" + format, Width: cfg.Width, Height: cfg.Height}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return File{}, true, fmt.Errorf("%w: a %s image of %d×%d pixels", ErrUnreadable, format, cfg.Width, cfg.Height)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > lim.MaxPixels {
		return File{}, true, fmt.Errorf("%w: the image has %d×%d pixels, more than %d", ErrTooLarge, cfg.Width, cfg.Height, lim.MaxPixels)
	}
	if int64(len(data)) > lim.MaxImage {
		return File{}, true, fmt.Errorf("%w: the image has %d bytes, more than %d", ErrTooLarge, len(data), lim.MaxImage)
	}
	f.Data = data
	return f, true, nil
}
