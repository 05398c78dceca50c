package calibrate

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/sim"
)

// TestKeyBytesTypeName: an interface's dynamic type is written as the
// string of its package path and name, as keyBytes writes any string,
// and the same again once typeName has it.
func TestKeyBytesTypeName(t *testing.T) {
	p := sim.PoolConfig{Cost: model.StepCost{GraphSizes: []int{1, 2}}}
	ty := reflect.TypeOf(p.Cost)
	want := []byte{1}
	want = keyBytes(want, reflect.ValueOf(ty.PkgPath()+"."+ty.String()))
	want = keyBytes(want, reflect.ValueOf(p.Cost))
	for i := range 2 {
		if got := keyBytes(nil, reflect.ValueOf(p).FieldByName("Cost")); !bytes.Equal(got, want) {
			t.Fatalf("call %d: %x, want %x", i, got, want)
		}
	}
	if typeName(ty) != "github.com/capsim/capsim/model.model.StepCost" {
		t.Errorf("typeName = %q", typeName(ty))
	}
}
