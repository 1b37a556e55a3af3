// The shared-breakers lane (two tabs, tab.html in two iframes): origin A broken and healed.
import { $, setOutage } from "./page.js";

const setOutageA = (down) => setOutage("a", down);

export async function shareBreak() {
  await setOutageA(true);
  try {
    $("#tab-left").contentWindow.postMessage("send", location.origin);
  } catch (e) {
    await setOutageA(false); // the tabs never heard of it: no outage left on
    throw e;
  }
}

export async function shareHeal() {
  await setOutageA(false);
  $("#tab-left").contentWindow.postMessage("probe", location.origin);
}
