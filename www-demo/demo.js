// The demo page: chaos controls for two local origins, an editable policy, a live timeline of
// attempts fed by onEvent, breaker lights fed by stats(), and one lane per capability, each a
// module of lanes/ (its handler puts back what it changed when it throws: lanes/page.js lane()).
import { $, ORIGINS, backend, buildOriginControls, client } from "./lanes/page.js";
import { showPolicy } from "./lanes/policy.js";
import { fire, lastTransition, renderLights, renderTimeline } from "./lanes/timeline.js";
import { paceBurst } from "./lanes/pacing.js";
import { compareJitter, compareThrottle } from "./lanes/jitter.js";
import { compareHedge } from "./lanes/hedge.js";
import { shareBreak, shareHeal } from "./lanes/share.js";
import { outboxDown, outboxUp, renderOutbox } from "./lanes/outbox.js";
import { storm } from "./lanes/storm.js";
import { edgeRun, edgeSetup } from "./lanes/edge.js";
import { breakerRules } from "./lanes/breaker.js";
import { compareFailover } from "./lanes/failover.js";
import { staleRun } from "./lanes/stale.js";
import { compareResume } from "./lanes/resume.js";
import { runEvents } from "./lanes/events.js";

await Promise.all([...document.querySelectorAll(".origin")].map(buildOriginControls));
$("#policy-form").addEventListener("input", showPolicy);
$("#fire-button").addEventListener("click", fire);
$("#reset-button").addEventListener("click", () => {
  client.reset();
  lastTransition.a = lastTransition.b = "";
  renderLights();
});
$("#storm-button").addEventListener("click", storm);
$("#pace-button").addEventListener("click", paceBurst);
$("#jitter-button").addEventListener("click", compareJitter);
$("#throttle-button").addEventListener("click", compareThrottle);
$("#hedge-button").addEventListener("click", compareHedge);
$("#breaker-button").addEventListener("click", breakerRules);
$("#failover-button").addEventListener("click", compareFailover);
$("#stale-button").addEventListener("click", staleRun);
$("#resume-button").addEventListener("click", compareResume);
$("#events-button").addEventListener("click", runEvents);
$("#share-break").addEventListener("click", shareBreak);
$("#outbox-down").addEventListener("click", outboxDown);
$("#outbox-up").addEventListener("click", outboxUp);
await renderOutbox();
$("#share-heal").addEventListener("click", shareHeal);
$("#edge-button").addEventListener("click", edgeRun);
edgeSetup();
showPolicy();
renderLights();
renderTimeline();
setInterval(renderLights, 250); // half-open is decided lazily: stats() shows it when the cooldown ends
$("#status").textContent = backend.serviceWorker
  ? `backend: mock origins ${ORIGINS.a} and ${ORIGINS.b}, answered by a service worker in this browser`
  : `backend: ${ORIGINS.a} and ${ORIGINS.b}`;
window.__demoReady = true;
