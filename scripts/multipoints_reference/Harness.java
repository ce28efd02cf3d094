// Plays games on MultiPoints' SingleGameEngine (https://github.com/vn971/multipoints, GNU GPL v2) and
// prints what it makes of every move, for scripts/multipoints_reference.py. Compiled against a
// MultiPoints checkout, never shipped with it; it uses only the engine's public methods.
//
// Input, one game a line: "WIDTH HEIGHT TOKEN...", 0-based points with y growing downwards.
//   Bx,y / Wx,y  a dot of blue (SGF B) / red (SGF W), that must be legal;
//   ?x,y         a dot of the side to move (blue first, then alternating), skipped when illegal.
// or "WIDTH HEIGHT near SEED RADIUS": a game drawn here with java.util.Random(SEED), every dot at a
// free point within RADIUS (Chebyshev distance) of the opponent's last dot, or anywhere when there is
// none, until the board is full; each move is printed as "COLOUR x,y ..." (its point before the rest).
// Output, for each token: "skip" (a ? token that was illegal), "illegal" (a B/W token that was), or
// "COLOUR BLUE_SCORE RED_SCORE STATE", STATE holding one letter a point, row by row:
//   . free   1 / 2 free in a blue / red empty enclosure (MultiPoints' CTRL surrounding)
//   , free point inside a realm   b / r live blue / red dot   B / R captured blue / red dot
// and "end" after the game.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import ru.narod.vn91.pointsop.gameEngine.SingleGameEngine;
import ru.narod.vn91.pointsop.gameEngine.SingleGameEngineInterface.DotType;

public class Harness {

	public static void main(String[] args) throws Exception {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
		PrintWriter out = new PrintWriter(System.out);
		String line;
		while ((line = in.readLine()) != null) {
			if (!line.isBlank()) {
				play(line.trim().split("\\s+"), out);
			}
		}
		out.flush();
	}

	static void play(String[] tokens, PrintWriter out) {
		int width = Integer.parseInt(tokens[0]);
		int height = Integer.parseInt(tokens[1]);
		if (tokens[2].equals("near")) {
			near(width, height, new Random(Long.parseLong(tokens[3])), Integer.parseInt(tokens[4]), out);
			return;
		}
		SingleGameEngine engine = new SingleGameEngine(width, height);
		boolean redToMove = false;
		for (int i = 2; i < tokens.length; i++) {
			String token = tokens[i];
			String[] xy = token.substring(1).split(",");
			int x = Integer.parseInt(xy[0]) + 1;
			int y = Integer.parseInt(xy[1]) + 1;
			char kind = token.charAt(0);
			boolean red = kind == '?' ? redToMove : kind == 'W';
			if (!engine.canMakeMove(x, y)) {
				out.println(kind == '?' ? "skip" : "illegal");
				continue;
			}
			engine.makeMove(x, y, red);
			redToMove = !red;
			out.println((red ? "W " : "B ") + engine.getBlueScore() + " " + engine.getRedScore() + " "
					+ state(engine, width, height));
		}
		out.println("end");
	}

	static void near(int width, int height, Random random, int radius, PrintWriter out) {
		SingleGameEngine engine = new SingleGameEngine(width, height);
		boolean red = false;
		int lastX = -1, lastY = -1;
		while (true) {
			List<int[]> close = new ArrayList<>();
			List<int[]> anywhere = new ArrayList<>();
			for (int y = 1; y <= height; y++) {
				for (int x = 1; x <= width; x++) {
					if (engine.canMakeMove(x, y)) {
						anywhere.add(new int[] {x, y});
						if (lastX > 0 && Math.abs(x - lastX) <= radius && Math.abs(y - lastY) <= radius) {
							close.add(new int[] {x, y});
						}
					}
				}
			}
			List<int[]> from = close.isEmpty() ? anywhere : close;
			if (from.isEmpty()) {
				break;
			}
			int[] point = from.get(random.nextInt(from.size()));
			engine.makeMove(point[0], point[1], red);
			out.println((red ? "W " : "B ") + (point[0] - 1) + "," + (point[1] - 1) + " " + engine.getBlueScore()
					+ " " + engine.getRedScore() + " " + state(engine, width, height));
			red = !red;
			lastX = point[0];
			lastY = point[1];
		}
		out.println("end");
	}

	static String state(SingleGameEngine engine, int width, int height) {
		StringBuilder text = new StringBuilder(width * height);
		for (int y = 1; y <= height; y++) {
			for (int x = 1; x <= width; x++) {
				text.append(letter(engine.getDotType(x, y)));
			}
		}
		return text.toString();
	}

	static char letter(DotType type) {
		switch (type) {
			case EMPTY: return '.';
			case BLUE_CTRL: return '1';
			case RED_CTRL: return '2';
			case BLUE_EATED_EMPTY: case RED_EATED_EMPTY: return ',';
			case BLUE: case BLUE_TIRED: return 'b';
			case RED: case RED_TIRED: return 'r';
			case RED_EATED_BLUE: return 'B';
			case BLUE_EATED_RED: return 'R';
			default: throw new IllegalStateException("unknown dot type " + type);
		}
	}
}
