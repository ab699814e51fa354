// The arguments a model is still writing, read as far as they go.
import { describe, expect, it } from "vitest";
import { partialArguments } from "./partialInput";

describe("partial arguments", () => {
  it("reads what is whole and closes what is open", () => {
    expect(partialArguments("")).toBeUndefined();
    expect(partialArguments("[1,")).toBeUndefined();
    expect(partialArguments("{")).toEqual({});
    expect(partialArguments('{"zo')).toEqual({});
    expect(partialArguments('{"zone":')).toEqual({});
    expect(partialArguments('{"zone":"Eur')).toEqual({ zone: "Eur" });
    expect(partialArguments('{"zone":"Europe/Paris","days":[1,2')).toEqual({ zone: "Europe/Paris", days: [1, 2] });
    expect(partialArguments('{"zone":"Europe/Paris","le')).toEqual({ zone: "Europe/Paris" });
    expect(partialArguments('{"a":{"b":"c\\')).toEqual({ a: { b: "c" } });
    expect(partialArguments('{"a":1,"b":tr')).toEqual({ a: 1 });
    expect(partialArguments('{"a":"x,y","b')).toEqual({ a: "x,y" });
    expect(partialArguments('{"zone":"UTC"}')).toEqual({ zone: "UTC" });
  });
});
