package ua

// The screen classes of a viewport width in CSS pixels, with the bounds
// Plausible uses (docs/ingest.md, "Devices"): below 576 a phone, below 992
// a tablet, below 1440 a laptop, else a desktop screen.
const (
	ScreenMobile  = "mobile"
	ScreenTablet  = "tablet"
	ScreenLaptop  = "laptop"
	ScreenDesktop = "desktop"
)

// maxViewportWidth is the widest viewport believed; a larger number is not
// a screen (a bug or a forged event) and has no class.
const maxViewportWidth = 100_000

// ScreenClass is the class of a viewport width, "" for a width that is not
// positive or past maxViewportWidth (-1 is "none sent").
func ScreenClass(width float64) string {
	switch {
	case !(width > 0) || width > maxViewportWidth:
		return ""
	case width < 576:
		return ScreenMobile
	case width < 992:
		return ScreenTablet
	case width < 1440:
		return ScreenLaptop
	}
	return ScreenDesktop
}
