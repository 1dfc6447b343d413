// Command ansipng renders a terminal capture with colours (the output of
// `tmux capture-pane -e -p`) to a PNG, cell by cell, with DejaVu Sans Mono.
// It is its own module so the runtime does not depend on x/image; it makes
// docs/terminal-session.png (see docs/terminal.md).
//
//	go run . capture.ansi out.png
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

const fontDir = "/usr/share/fonts/truetype/dejavu/"

// substitutes are look-alikes for glyphs DejaVu lacks.
var substitutes = map[rune]rune{'⎿': '└'}

type cell struct {
	r          rune
	fg, bg     color.RGBA
	bold, wide bool
}

var (
	defFG = color.RGBA{0xd0, 0xd0, 0xd0, 0xff}
	defBG = color.RGBA{0x1c, 0x1c, 0x1c, 0xff}
)

// palette is the xterm 256-colour palette.
func palette(n int) color.RGBA {
	base := []color.RGBA{
		{0x00, 0x00, 0x00, 0xff}, {0xcd, 0x31, 0x31, 0xff}, {0x0d, 0xbc, 0x79, 0xff}, {0xe5, 0xe5, 0x10, 0xff},
		{0x24, 0x72, 0xc8, 0xff}, {0xbc, 0x3f, 0xbc, 0xff}, {0x11, 0xa8, 0xcd, 0xff}, {0xe5, 0xe5, 0xe5, 0xff},
		{0x66, 0x66, 0x66, 0xff}, {0xf1, 0x4c, 0x4c, 0xff}, {0x23, 0xd1, 0x8b, 0xff}, {0xf5, 0xf5, 0x43, 0xff},
		{0x3b, 0x8e, 0xea, 0xff}, {0xd6, 0x70, 0xd6, 0xff}, {0x29, 0xb8, 0xdb, 0xff}, {0xff, 0xff, 0xff, 0xff},
	}
	switch {
	case n < 16:
		return base[n]
	case n < 232:
		n -= 16
		lv := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + v*40)
		}
		return color.RGBA{lv(n / 36), lv(n / 6 % 6), lv(n % 6), 0xff}
	}
	g := uint8(8 + (n-232)*10)
	return color.RGBA{g, g, g, 0xff}
}

// parse turns the capture into rows of cells.
func parse(text string) [][]cell {
	var rows [][]cell
	fg, bg, bold, faint, reverse := defFG, defBG, false, false, false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		var row []cell
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			if rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '[' {
				j := i + 2
				for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
					j++
				}
				if j < len(rs) && rs[j] == 'm' {
					params := strings.Split(string(rs[i+2:j]), ";")
					for k := 0; k < len(params); k++ {
						n, _ := strconv.Atoi(params[k])
						switch {
						case params[k] == "" || n == 0:
							fg, bg, bold, faint, reverse = defFG, defBG, false, false, false
						case n == 1:
							bold = true
						case n == 2:
							faint = true
						case n == 22:
							bold, faint = false, false
						case n == 7:
							reverse = true
						case n == 27:
							reverse = false
						case n >= 30 && n <= 37:
							fg = palette(n - 30)
						case n >= 90 && n <= 97:
							fg = palette(n - 90 + 8)
						case n >= 40 && n <= 47:
							bg = palette(n - 40)
						case n >= 100 && n <= 107:
							bg = palette(n - 100 + 8)
						case n == 39:
							fg = defFG
						case n == 49:
							bg = defBG
						case (n == 38 || n == 48) && k+1 < len(params):
							var c color.RGBA
							if params[k+1] == "5" && k+2 < len(params) {
								v, _ := strconv.Atoi(params[k+2])
								c, k = palette(v), k+2
							} else if params[k+1] == "2" && k+4 < len(params) {
								r, _ := strconv.Atoi(params[k+2])
								g, _ := strconv.Atoi(params[k+3])
								b, _ := strconv.Atoi(params[k+4])
								c, k = color.RGBA{uint8(r), uint8(g), uint8(b), 0xff}, k+4
							}
							if n == 38 {
								fg = c
							} else {
								bg = c
							}
						}
					}
				}
				i = j
				continue
			}
			f, b := fg, bg
			if faint {
				f = color.RGBA{uint8(int(f.R) * 6 / 10), uint8(int(f.G) * 6 / 10), uint8(int(f.B) * 6 / 10), 0xff}
			}
			if reverse {
				f, b = b, f
			}
			w := runewidth.RuneWidth(rs[i])
			row = append(row, cell{r: rs[i], fg: f, bg: b, bold: bold, wide: w == 2})
			if w == 2 {
				row = append(row, cell{r: 0, fg: f, bg: b})
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func loadFace(name string, size float64) font.Face {
	data, err := os.ReadFile(fontDir + name)
	if err != nil {
		fail(err)
	}
	f, err := opentype.Parse(data)
	if err != nil {
		fail(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 96, Hinting: font.HintingFull})
	if err != nil {
		fail(err)
	}
	return face
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ansipng:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ansipng CAPTURE OUT.png")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	rows := parse(string(in))
	regular, bold := loadFace("DejaVuSansMono.ttf", 13), loadFace("DejaVuSansMono-Bold.ttf", 13)
	braille := loadFace("DejaVuSans.ttf", 13) // the mono face has no braille (spinners)
	m := regular.Metrics()
	adv, _ := regular.GlyphAdvance('M')
	cw, ch := adv.Ceil(), (m.Ascent+m.Descent).Ceil()+2
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	const pad = 12
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*pad, len(rows)*ch+2*pad))
	draw.Draw(img, img.Bounds(), &image.Uniform{defBG}, image.Point{}, draw.Src)
	for y, row := range rows {
		for x, c := range row {
			r := image.Rect(pad+x*cw, pad+y*ch, pad+(x+1)*cw, pad+(y+1)*ch)
			if c.bg != defBG {
				draw.Draw(img, r, &image.Uniform{c.bg}, image.Point{}, draw.Src)
			}
			if c.r == 0 || c.r == ' ' {
				continue
			}
			face := regular
			if c.bold {
				face = bold
			}
			if c.r >= 0x2800 && c.r <= 0x28ff {
				face = braille
			}
			glyph := c.r
			if sub, ok := substitutes[glyph]; ok {
				glyph = sub
			}
			d := &font.Drawer{Dst: img, Src: &image.Uniform{c.fg}, Face: face,
				Dot: fixed.P(pad+x*cw, pad+y*ch+m.Ascent.Ceil()+1)}
			d.DrawString(string(glyph))
		}
	}
	out, err := os.Create(os.Args[2])
	if err != nil {
		fail(err)
	}
	if err := png.Encode(out, img); err != nil {
		fail(err)
	}
	if err := out.Close(); err != nil {
		fail(err)
	}
}
