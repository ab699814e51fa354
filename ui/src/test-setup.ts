import "@testing-library/jest-dom/vitest";

// jsdom does not lay out, so it has no scrolling.
if (!Element.prototype.scrollIntoView) Element.prototype.scrollIntoView = function scrollIntoView() {};

import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(cleanup);
