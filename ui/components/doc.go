// Package components holds the wizard's reusable pieces, each drawn from
// the values it is given (never from the root's state): the cost panel,
// the subnet map, the progress list of an engine run, the yes/no confirm
// box, text inputs and the full-screen overlay that hosts a sub-program
// (the doctor).
package components
