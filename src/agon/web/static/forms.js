// Forms built from the games' declared options (/api/meta): the lobby's new game and the
// analysis board's set-up share them. Nothing here knows a game.

export function element(tag, attributes = {}, children = []) {
  const made = document.createElement(tag);
  for (const [name, given] of Object.entries(attributes)) {
    if (given === null || given === undefined || given === false) continue;
    if (name === "text") made.textContent = given;
    else made.setAttribute(name, given === true ? "" : String(given));
  }
  made.append(...children);
  return made;
}

/** One option's field: a number, a checkbox, a choice or a text, with its conditions. */
export function optionField(option, value = option.default) {
  const common = { name: option.name, title: option.help };
  let field;
  if (option.kind === "bool") {
    const box = element("input", { ...common, type: "checkbox", checked: value });
    field = element("label", { class: "check-field" }, [box, ` ${option.label}`]);
  } else if (option.kind === "choice") {
    const select = element("select", common, option.choices.map((choice) => {
      const item = new Option(choice.label, choice.value);
      item.selected = choice.value === value;
      return item;
    }));
    field = element("label", {}, [`${option.label} `, select]);
  } else {
    const number = option.kind === "whole" || option.kind === "number";
    const input = element("input", {
      ...common,
      type: number ? "number" : "text",
      min: option.minimum,
      max: option.maximum,
      step: option.kind === "whole" ? 1 : option.step ?? "any",
      value,
      inputmode: option.kind === "whole" ? "numeric" : number ? "decimal" : null,
    });
    field = element("label", {}, [`${option.label} `, input]);
  }
  if (option.applies_when) {
    field.dataset.appliesOption = option.applies_when.option;
    field.dataset.appliesValues = JSON.stringify(option.applies_when.values);
  }
  field.dataset.kind = option.kind;
  return field;
}

/** A game's options as a fieldset (``values``: the options to show, else the defaults). */
export function variantFieldset(name, game, values = {}) {
  const fields = element("div", { class: "fields" },
    game.options.map((option) => optionField(option, values[option.name] ?? option.default)));
  const hints = game.options.filter((option) => option.kind === "choice")
    .map((option) => element("p", { class: "hint", "data-hint-for": option.name }));
  return element("fieldset", { class: "variant", "data-game": name }, [
    element("legend", { text: `${game.title}: the variant` }), fields, ...hints,
  ]);
}

function fieldValue(fieldset, name) {
  const input = fieldset.querySelector(`[name="${CSS.escape(name)}"]`);
  if (!input) return undefined;
  return input.type === "checkbox" ? String(input.checked) : input.value;
}

/** Shows the fields that apply to the choices made, and the chosen choices' descriptions. */
export function refreshConditions(fieldset, game) {
  for (const field of fieldset.querySelectorAll("[data-applies-option]")) {
    const values = JSON.parse(field.dataset.appliesValues);
    field.hidden = !values.includes(fieldValue(fieldset, field.dataset.appliesOption));
  }
  for (const hint of fieldset.querySelectorAll("[data-hint-for]")) {
    const option = game.options.find((o) => o.name === hint.dataset.hintFor);
    const picked = option.choices.find((choice) => choice.value === fieldValue(fieldset, option.name));
    hint.textContent = picked?.description ? `${picked.label}: ${picked.description}` : "";
  }
}

/** The options a fieldset gives (fields that do not apply left out). */
export function readOptions(fieldset) {
  const chosen = {};
  for (const field of fieldset?.querySelectorAll(".fields > label") ?? []) {
    if (field.hidden) continue;
    const input = field.querySelector("[name]");
    if (field.dataset.kind === "bool") chosen[input.name] = input.checked;
    else if (field.dataset.kind === "whole" || field.dataset.kind === "number") {
      const text = input.value.trim();
      if (text !== "") chosen[input.name] = Number(text);
    } else chosen[input.name] = input.value;
  }
  return chosen;
}
