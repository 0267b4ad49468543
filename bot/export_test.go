package bot

// Unexported helpers, for the tests of package bot_test.
var (
	EncodeValue = encodeValue
	DecodeValue = decodeValue
)

// Lanes is lanes, for its tests.
type Lanes = lanes

// StartLanes is startLanes.
var StartLanes = startLanes

// Do is lanes.do.
func (l *lanes) Do(key string, f func()) { l.do(key, f) }

// Stop is lanes.stop.
func (l *lanes) Stop() { l.stop() }
