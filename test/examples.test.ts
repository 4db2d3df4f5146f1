/** The README's first command, `npm start`, keeps working. */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { expect, it } from "vitest"

it("npm start runs the quickstart agent: memory across turns, interrupts resumed, history", () => {
  const output = execFileSync(process.execPath, [join(import.meta.dirname, "../examples/quickstart.ts")], {
    encoding: "utf8",
    env: { ...process.env, THREAD_ID: "example-test" }
  })
  expect(output).toContain("model  > You have told me: My name is Ada. / I like graphs.")
  expect(output).toContain(`pause  > Send this reply? (waiting at "review")`)
  expect(output.match(/resume > approved=true/g)).toHaveLength(2)
  expect(output).toMatch(/step {2}6 loop {3}next=\[\]/)
  expect(output).toMatch(/step -1 input {2}next=\[__start__\]/)
})
